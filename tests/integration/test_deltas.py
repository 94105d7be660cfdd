"""Ingest's deltas (schema/026, docs/STORAGE.md "Deltas"): a stored report
leaves one group_deltas row, which fold_group_deltas counts into the day,
dimension and facet rows — by the server's folder every
STALLSCOPE_FOLD_INTERVAL seconds, and by every read of those rows first,
so an answer counts every report committed before it was asked.

The reports here are stored by calling ingest_reports directly (as the
server does), so no HTTP request folds them on its way."""
import time

from conftest import create_app, migrate, psql
from ingest_util import allow_everyone
from test_aggregates import ingest_users
from test_api_filters import get


def deltas_setup(cluster, make_server, name, fold_interval):
    db = cluster.create_db(name)
    migrate(db)
    server = make_server(env={"STALLSCOPE_FOLD_INTERVAL": str(fold_interval)}, db_url=db)
    app = create_app(db)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    allow_everyone(server, app)
    version = psql(db, f"SELECT version FROM app_config WHERE app_id = {app_id}")
    return db, server, app, app_id, version


def waiting(db, app_id):
    return int(psql(db, f"SELECT count(*) FROM group_deltas WHERE app_id = {app_id}"))


def test_a_read_counts_the_deltas_no_fold_has_counted_yet(cluster, make_server):
    """The folder's next pass is an hour away: the lists over a day range
    or a filter, a group's detail and the comparison count the reports all
    the same, and leave no delta behind."""
    db, server, app, app_id, version = deltas_setup(cluster, make_server, "deltas_read", 3600)
    ingest_users(db, app_id, version, "hot", 1, 30, duration_sql="i * 100")
    ingest_users(db, app_id, version, "cool", 31, 5)
    assert waiting(db, app_id) == 35

    today = psql(db, "SELECT current_date")
    listed = get(server, app, f"/groups?from={today}&to={today}")["groups"]
    assert [(g["key"], g["reports"], g["users"]) for g in listed] == [
        ("hot", 30, 30), ("cool", 5, 5)]
    assert listed[0]["stall_ms"] == sum(i * 100 for i in range(1, 31))
    assert waiting(db, app_id) == 0

    ingest_users(db, app_id, version, "hot", 36, 4)
    by_device = get(server, app, "/groups?device=iPhone14,2")["groups"]
    assert [(g["key"], g["reports"]) for g in by_device] == [("hot", 34), ("cool", 5)]

    ingest_users(db, app_id, version, "cool", 40, 2)
    detail = get(server, app, "/groups/cool?version=1.0")
    assert (detail["group"]["reports"], detail["group"]["users"]) == (7, 7)
    assert [(s["key"], s["reports"]) for s in detail["subgroups"]] == [("cool-2", 7)]

    ingest_users(db, app_id, version, "new", 42, 3)
    compared = get(server, app, "/compare?base=1.0&target=1.0")
    assert {g["key"]: g["target"]["affected"] for g in compared["groups"]} == {
        "hot": 34, "cool": 7, "new": 3}
    assert waiting(db, app_id) == 0


def test_the_folder_counts_deltas_nobody_reads(cluster, make_server):
    """With the default interval the deltas are counted within seconds
    without any read."""
    db, _, _, app_id, version = deltas_setup(cluster, make_server, "deltas_folder", 1)
    ingest_users(db, app_id, version, "hot", 1, 20)
    deadline = time.monotonic() + 15
    while waiting(db, app_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert waiting(db, app_id) == 0
    assert psql(db, f"SELECT reports FROM group_days WHERE app_id = {app_id}"
                    " AND level = 1 AND key = 'hot'") == "20"
