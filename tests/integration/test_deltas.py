"""Ingest's deltas (schema/026, docs/STORAGE.md "Deltas"): a stored report
leaves one group_deltas row, which fold_group_deltas counts into its groups'
counters and the day, dimension and facet rows — by the server's folder every
STALLSCOPE_FOLD_INTERVAL seconds, and by every read of those rows first,
so an answer counts every report committed before it was asked.

The reports here are stored by calling ingest_reports directly (as the
server does), so no HTTP request folds them on its way."""
import subprocess
import time

from conftest import PSQL, create_app, migrate, psql, stallscope
from ingest_util import allow_everyone
from test_aggregates import ingest_users
from test_api_filters import get
from test_migrate import migrate_up_to


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
    # (A version against itself is a 400 since issue 42: another base.)
    compared = get(server, app, "/compare?base=0.9&target=1.0")
    assert {g["key"]: g["target"]["affected"] for g in compared["groups"]} == {
        "hot": 34, "cool": 7, "new": 3}
    assert waiting(db, app_id) == 0

    # Ingest makes a new group and leaves its counters to the deltas
    # (schema/028); the all-time list and the call tree count them.
    ingest_users(db, app_id, version, "fresh", 50, 3, duration_sql="700")
    assert psql(db, f"SELECT level, reports, users, stall_ms FROM groups WHERE app_id = {app_id}"
                    " AND key LIKE 'fresh%' ORDER BY 1", fold_first=False).split() == [
        "1|0|0|0", "2|0|0|0"]
    assert [(g["key"], g["reports"], g["users"], g["stall_ms"])
            for g in get(server, app, "/groups")["groups"]] == [
        ("hot", 34, 34, sum(i * 100 for i in range(1, 31))), ("cool", 7, 7, 0),
        ("new", 3, 3, 0), ("fresh", 3, 3, 2100)]
    ingest_users(db, app_id, version, "fresher", 53, 2)
    tree = server.request("GET", f"/api/v1/apps/{app['app']}/groups/fresher/tree",
                          token=app["admin_token"])
    assert tree.status == 200, tree
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


def test_a_batch_of_known_groups_does_not_wait_for_the_fold(cluster, make_server, monkeypatch):
    """The fold holds a popular group's row until it commits (here: another
    transaction has updated both of its rows and sleeps). A batch of that
    group's reports, offering no better culprit, is stored meanwhile: it
    neither writes nor locks the existing rows. A batch that makes a new
    group is not held either."""
    db, _, _, app_id, version = deltas_setup(cluster, make_server, "deltas_no_wait", 3600)
    ingest_users(db, app_id, version, "busy", 1, 3)
    holder = subprocess.Popen(
        [PSQL, db, "-c", f"UPDATE groups SET reports = reports + 0 WHERE app_id = {app_id}"
                         " AND key LIKE 'busy%'; SELECT pg_sleep(60)"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while psql(db, "SELECT count(*) FROM pg_stat_activity"
                       " WHERE wait_event = 'PgSleep'") != "1":
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.1)
        # Without the change the batch would wait out this timeout on the
        # held rows and fail.
        monkeypatch.setenv("PGOPTIONS", "-c lock_timeout=5s")
        ingest_users(db, app_id, version, "busy", 4, 2)
        ingest_users(db, app_id, version, "other", 6, 1)
        monkeypatch.delenv("PGOPTIONS")
    finally:
        psql(db, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity"
                 " WHERE wait_event = 'PgSleep'")
        holder.wait(timeout=15)
    assert psql(db, f"SELECT key, reports FROM groups WHERE app_id = {app_id} AND level = 1"
                    " ORDER BY key").split() == ["busy|5", "other|1"]


def test_the_pick_lists_count_the_deltas_no_fold_has_counted_yet(cluster, make_server):
    """The app's pick lists (app_dimensions) are the fold's, not every
    batch's (schema/040): ingest leaves them alone, GET …/dimensions folds
    first and lists every report committed before it, once."""
    db, server, app, app_id, version = deltas_setup(cluster, make_server, "deltas_dims", 3600)
    ingest_users(db, app_id, version, "hot", 1, 4)
    ingest_users(db, app_id, version, "cool", 5, 3, app_version="2.0")
    assert psql(db, f"SELECT count(*) FROM app_dimensions WHERE app_id = {app_id}",
                fold_first=False) == "0"
    assert waiting(db, app_id) == 7

    lists = get(server, app, "/dimensions")
    assert waiting(db, app_id) == 0
    assert [(v["value"], v["reports"]) for v in lists["versions"]] == [("2.0", 3), ("1.0", 4)]
    assert [(v["value"], v["reports"]) for v in lists["devices"]] == [("iPhone14,2", 7)]
    assert [(v["value"], v["reports"]) for v in lists["kinds"]] == [("stall", 7)]
    ingest_users(db, app_id, version, "hot", 8, 2, app_version="2.0")
    lists = get(server, app, "/dimensions")
    assert [(v["value"], v["reports"]) for v in lists["versions"]] == [("2.0", 5), ("1.0", 4)]
    assert [(v["value"], v["reports"]) for v in lists["os_versions"]] == [("17.2", 9)]


def upgraded_app_with_group_up(db):
    """An app of an older schema's database (no function file) with groups
    up/up-2, one report of user-a counted in them, and the dimension
    combination of a report of 2.0 on an iPhone; its id."""
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{create_app(db)['app']}'")
    psql(db, f"""
        INSERT INTO groups (app_id, level, key, parent_key, frames, reports, users, users_hll,
                            first_seen, last_seen)
        SELECT {app_id}, l, CASE l WHEN 1 THEN 'up' ELSE 'up-2' END,
               CASE l WHEN 1 THEN NULL ELSE 'up' END, '[]', 1, 1,
               hll_add_agg(hll_hash_text('user-a'), 12, 5, 1024, 0), now(), now()
          FROM (VALUES (1), (2)) AS x(l) GROUP BY l;
        INSERT INTO dim_combos (app_id, app_version, os_version, device, kind)
        VALUES ({app_id}, '2.0', '17.2', 'iPhone14,2', 'stall')""")
    return app_id


def test_upgrade_to_040_counts_a_waiting_delta_once_in_pick_lists_and_activity(cluster,
                                                                                tmp_path):
    """A database at schema 039, whose ingest counted its reports in the
    pick lists and the activity itself: a report of version 1.0 (300 ms)
    folded, one of 2.0 (700 ms) still waiting, both on an iPhone. After
    `stallscope migrate` the fold counts the second once: 2.0 once, the
    iPhone twice, 2.0's day one report of 700 ms and one user."""
    db = cluster.create_db("deltas_upgrade_040")
    migrate_up_to(db, tmp_path, 40)
    app_id = upgraded_app_with_group_up(db)
    psql(db, f"""
        INSERT INTO app_dimensions (app_id, day, dim, value, reports, first_seen, last_seen)
        SELECT {app_id}, current_date, dim, value, n, now(), now()
          FROM (VALUES ('version', '1.0', 1), ('version', '2.0', 1),
                       ('os_version', '17.2', 2), ('device', 'iPhone14,2', 2),
                       ('kind', 'stall', 2)) AS x(dim, value, n);
        INSERT INTO activity_users (app_id, day, app_version, user_id, in_sample, reported)
        VALUES ({app_id}, current_date, '1.0', 'user-a', true, true),
               ({app_id}, current_date, '2.0', 'user-b', true, true);
        INSERT INTO activity_daily (app_id, day, app_version, active_users, sampled_users,
                                    stalled_users, reports, stall_ms)
        VALUES ({app_id}, current_date, '1.0', 1, 1, 1, 1, 300),
               ({app_id}, current_date, '2.0', 1, 1, 1, 1, 700);
        INSERT INTO group_deltas (app_id, report, key1, key2, day, at, user_id, app_version,
                                  os_version, device, kind, in_sample, duration_ms)
        VALUES ({app_id}, 2, 'up', 'up-2', current_date, now(), 'user-b', '2.0', '17.2',
                'iPhone14,2', 'stall', true, 700)""")

    assert "applied 040_pick_lists_and_activity_from_deltas.sql" in migrate(db).stdout
    assert psql(db, f"SELECT dim, value, reports FROM app_dimensions WHERE app_id = {app_id}"
                    " ORDER BY 1, 2").splitlines() == [
        "device|iPhone14,2|2", "kind|stall|2", "os_version|17.2|2", "version|1.0|1",
        "version|2.0|1"]
    assert psql(db, "SELECT app_version, active_users, sampled_users, stalled_users, reports,"
                    f" stall_ms FROM activity_daily WHERE app_id = {app_id}"
                    " ORDER BY 1").splitlines() == ["1.0|1|1|1|1|300", "2.0|1|1|1|1|700"]
    assert waiting(db, app_id) == 0


def test_the_activity_of_stored_reports_is_the_folds(cluster, make_server):
    """A stored report's user is counted active, sampled and stalled by
    the fold (schema/040), not by ingest; GET …/stats folds first, and a
    user's second report counts the report, not the user again."""
    db, server, app, app_id, version = deltas_setup(cluster, make_server, "deltas_act", 3600)
    ingest_users(db, app_id, version, "hot", 1, 4, duration_sql="i * 10")
    assert psql(db, f"SELECT count(*) FROM activity_users WHERE app_id = {app_id}",
                fold_first=False) == "0"
    assert psql(db, f"SELECT count(*) FROM activity_daily WHERE app_id = {app_id}",
                fold_first=False) == "0"
    today = psql(db, "SELECT current_date")
    days = get(server, app, f"/stats?from={today}")["days"]
    assert waiting(db, app_id) == 0
    assert [(d["version"], d["active_users"], d["sampled_users"], d["stalled_users"],
             d["reports"], d["stall_ms"]) for d in days] == [("1.0", 4, 4, 4, 4, 100)]
    psql(db, f"""SELECT outcome FROM ingest_reports({app_id}, {version}, ARRAY['again'],
                 ARRAY['user-2'], ARRAY[current_date], ARRAY[now()], ARRAY[true],
                 ARRAY['stall'], ARRAY['native'], ARRAY['1.0'], ARRAY[NULL], ARRAY[NULL],
                 ARRAY['17.2'], ARRAY[NULL], ARRAY['iPhone14,2'], ARRAY[NULL],
                 ARRAY[50::bigint], ARRAY['hot'], ARRAY['hot-2'], ARRAY[false], ARRAY['[]'],
                 ARRAY['[]'], ARRAY['[]'], ARRAY['{{}}'], ARRAY['{{}}'], ARRAY['{{}}'],
                 ARRAY['{{}}'], '{{}}'::uuid[], '{{}}'::text[], ARRAY[NULL])""")
    days = get(server, app, f"/stats?from={today}")["days"]
    assert [(d["active_users"], d["stalled_users"], d["reports"], d["stall_ms"])
            for d in days] == [(4, 4, 5, 150)]


def test_upgrade_to_028_counts_a_waiting_delta_once(cluster, tmp_path):
    """A database at schema 027, whose ingest counted its reports in their
    groups itself: two reports of 300 and 700 ms, the first one's delta
    folded, the second's still waiting. After `stallscope migrate` the
    fold counts the second in its groups, once."""
    db = cluster.create_db("deltas_upgrade_028")
    migrate_up_to(db, tmp_path, 28)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{create_app(db)['app']}'")
    psql(db, f"""
        INSERT INTO groups (app_id, level, key, parent_key, frames, reports, users, users_hll,
                            first_seen, last_seen, stall_ms, max_duration_ms, duration_hist)
        SELECT {app_id}, l, CASE l WHEN 1 THEN 'up' ELSE 'up-2' END,
               CASE l WHEN 1 THEN NULL ELSE 'up' END, '[]', 2, 2,
               hll_add_agg(hll_hash_text(u), 12, 5, 1024, 0), now(), now(), 1000, 700,
               '{{0,1,1,0,0,0,0,0}}'
          FROM (VALUES (1), (2)) AS x(l), (VALUES ('user-a'), ('user-b')) AS y(u) GROUP BY l;
        INSERT INTO group_deltas (app_id, report, key1, key2, day, at, user_id, app_version,
                                  os_version, device, kind, in_sample, duration_ms)
        VALUES ({app_id}, 2, 'up', 'up-2', current_date, now(), 'user-b', '1.0', '17.2', '',
                'stall', true, 700)""")

    assert "applied 028_group_counters_from_deltas.sql" in migrate(db).stdout
    assert psql(db, f"SELECT level, reports, users, stall_ms, max_duration_ms, duration_hist"
                    f" FROM groups WHERE app_id = {app_id} ORDER BY level").splitlines() == [
        "1|2|2|1000|700|{0,1,1,0,0,0,0,0}", "2|2|2|1000|700|{0,1,1,0,0,0,0,0}"]
    assert waiting(db, app_id) == 0


def test_facet_rows_keep_one_sketch_while_every_user_is_in_the_sample(cluster, make_server):
    """A facet row's in-sample users are its users (NULL, schema/029)
    until a report of a whitelisted user comes: then it keeps them apart,
    and affected leaves that user out."""
    db, server, app, app_id, version = deltas_setup(cluster, make_server, "deltas_sample", 3600)
    rows = (f"SELECT count(*), count(sample_users), min(hll_cardinality(users))::int,"
            f" min(affected), min(hll_cardinality(coalesce(sample_users, users)))::int"
            f" FROM group_facet_days WHERE app_id = {app_id}")
    ingest_users(db, app_id, version, "s", 1, 5)
    assert psql(db, rows) == "8|0|5|5|5"  # four dimensions, two levels
    psql(db, f"INSERT INTO whitelist (app_id, user_id) VALUES ({app_id}, 'user-6')")
    ingest_users(db, app_id, version, "s", 6, 1)
    assert psql(db, rows) == "8|8|6|5|5"
    ingest_users(db, app_id, version, "s", 7, 2)
    assert psql(db, rows) == "8|8|8|7|7"
    listed = get(server, app, "/groups?version=1.0")["groups"]
    assert [(g["key"], g["reports"], g["users"], g["affected"]) for g in listed] == [
        ("s", 8, 8, 7)]


def test_the_call_tree_counts_the_deltas_no_fold_has_counted_yet(cluster, make_server):
    """The call tree's counts (group_stack_days) are the fold's, not every
    batch's (schema/042): ingest leaves them alone, the tree folds first
    and counts every report committed before it, once."""
    db, server, app, app_id, version = deltas_setup(cluster, make_server, "deltas_tree", 3600)
    ingest_users(db, app_id, version, "hot", 1, 4)
    ingest_users(db, app_id, version, "hot", 5, 3, app_version="2.0")
    counts = (f"SELECT app_version, reports FROM group_stack_days WHERE app_id = {app_id}"
              " AND key1 = 'hot' ORDER BY 1")
    assert psql(db, counts, fold_first=False) == ""
    assert waiting(db, app_id) == 7

    tree = server.request("GET", f"/api/v1/apps/{app['app']}/groups/hot/tree",
                          token=app["admin_token"])
    assert tree.status == 200 and tree.json["reports"] == 7, tree
    assert waiting(db, app_id) == 0
    assert psql(db, counts, fold_first=False).split() == ["1.0|4", "2.0|3"]
    ingest_users(db, app_id, version, "hot", 8, 2)
    tree = server.request("GET", f"/api/v1/apps/{app['app']}/groups/hot/tree?version=1.0",
                          token=app["admin_token"])
    assert tree.status == 200 and tree.json["reports"] == 6, tree


def test_upgrade_to_042_counts_a_waiting_delta_once_in_the_call_tree(cluster, tmp_path):
    """A database at schema 041, whose ingest counted its reports in the
    call tree itself: one report folded, one still waiting, both of group
    up/up-2 with a lost stack. After `stallscope migrate` the fold leaves
    the second's count as ingest made it: two reports, not three."""
    db = cluster.create_db("deltas_upgrade_042")
    migrate_up_to(db, tmp_path, 42)
    app_id = upgraded_app_with_group_up(db)
    psql(db, f"""
        INSERT INTO group_stack_days (app_id, key1, key2, day, app_version, stack, frames,
                                      reports)
        VALUES ({app_id}, 'up', 'up-2', current_date, '2.0',
                '00000000-0000-0000-0000-000000000000', NULL, 2);
        INSERT INTO group_deltas (app_id, report, key1, key2, day, at, user_id, app_version,
                                  os_version, device, kind, in_sample, duration_ms)
        VALUES ({app_id}, 2, 'up', 'up-2', current_date, now(), 'user-b', '2.0', '17.2',
                'iPhone14,2', 'stall', true, 700)""")

    assert "applied 042_call_tree_from_deltas.sql" in migrate(db).stdout
    assert psql(db, f"SELECT stack IS NULL FROM group_deltas WHERE app_id = {app_id}",
                fold_first=False) == "t"
    assert psql(db, "SELECT key1, key2, app_version, reports FROM group_stack_days"
                    f" WHERE app_id = {app_id}") == "up|up-2|2.0|2"
    assert waiting(db, app_id) == 0


def test_retention_leaves_no_call_tree_count_for_a_waiting_delta_of_a_dropped_day(
        cluster, make_server):
    """Reports stored on a day ten days back, their deltas not folded yet,
    and today's: `stallscope purge` with a retention of 7 days drops the
    old day, and the fold that follows counts only today's report in the
    call tree (the group counters keep both, as retention keeps them)."""
    db, _, _, app_id, version = deltas_setup(cluster, make_server, "deltas_retention", 3600)
    ingest_users(db, app_id, version, "old", 1, 3, day_sql="current_date - 10")
    ingest_users(db, app_id, version, "old", 4, 1)
    assert waiting(db, app_id) == 4

    psql(db, f"UPDATE app_config SET retention_days = 7 WHERE app_id = {app_id}")
    stallscope("purge", db_url=db)
    assert psql(db, "SELECT day = current_date, reports FROM group_stack_days"
                    f" WHERE app_id = {app_id}") == "t|1"
    assert waiting(db, app_id) == 0
    assert psql(db, f"SELECT reports FROM groups WHERE app_id = {app_id} AND level = 1") == "4"
