"""Combinations of dimensions (schema/039, docs/STORAGE.md "Dimension
combinations"): each combination of app version, OS version, device and
kind an app's reports came with is numbered once, in dim_combos, and the
dimension rows hold its number; the lists under two or more filters find
their rows through it."""
from conftest import DIM_ROWS, create_app, migrate, psql
from ingest_util import allow_everyone
from test_aggregates import ingest_users
from test_api_filters import get


def test_each_combination_is_numbered_once(cluster, make_server):
    """Batch after batch of one combination keeps one number, and the next
    combination takes the next one (a batch does not use numbers up on
    combinations already there); another app numbers its own; the rows and
    a list under two filters count each combination's reports."""
    db = cluster.create_db("dim_combos_numbers")
    migrate(db)
    server = make_server(db_url=db)
    app, other = create_app(db), create_app(db)
    ids = []
    for made in (app, other):
        ids.append(psql(db, f"SELECT id FROM apps WHERE bundle_id = '{made['app']}'"))
        allow_everyone(server, made)
    versions = [psql(db, f"SELECT version FROM app_config WHERE app_id = {i}") for i in ids]
    for batch in range(4):
        ingest_users(db, ids[0], versions[0], "one", 1 + 10 * batch, 10)
    ingest_users(db, ids[0], versions[0], "two", 1, 3, app_version="2.0")
    ingest_users(db, ids[1], versions[1], "one", 1, 2)
    assert psql(db, "SELECT string_agg(app_id || ':' || app_version, ' ' ORDER BY id)"
                    " FROM dim_combos") == f"{ids[0]}:1.0 {ids[0]}:2.0 {ids[1]}:1.0"
    assert psql(db, "SELECT max(id) - min(id) FROM dim_combos") == "2"
    rows = psql(db, f"""SELECT app_id || ' ' || level || ' ' || key || ' ' || app_version
                           || ' ' || reports FROM {DIM_ROWS} ORDER BY app_id, level, key""")
    assert rows.splitlines() == [f"{ids[0]} 1 one 1.0 40", f"{ids[0]} 1 two 2.0 3",
                                 f"{ids[0]} 2 one-2 1.0 40", f"{ids[0]} 2 two-2 2.0 3",
                                 f"{ids[1]} 1 one 1.0 2", f"{ids[1]} 2 one-2 1.0 2"]
    for version, want in (("1.0", {"one": 40}), ("2.0", {"two": 3}), ("3.0", {})):
        listed = get(server, app, f"/groups?version={version}&kind=stall")["groups"]
        assert {g["key"]: g["reports"] for g in listed} == want, version
        assert all(g["users"] == g["reports"] for g in listed)
