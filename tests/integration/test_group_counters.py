"""Distinct users per group stay exact when two transactions of one user
overlap: ingest_reports adds users to the groups' sketches, and
move_report takes the user's lock before it recounts the old groups' users
from their kept reports (schema/016). Driven through psql so the overlap is certain: the first
transaction holds its rows uncommitted while the second counts."""

import json
import subprocess
import time

from conftest import PSQL, create_app, psql

USER = "same-user"


def ingest_sql(app_id, version, app_version):
    """One report of USER in groups k1/k2, as the server stores it."""
    one = lambda value, cast="text": f"ARRAY[{value}]::{cast}[]"
    text = lambda value: one("'" + value.replace("'", "''") + "'")
    null = one("NULL")
    return (f"SELECT outcome FROM ingest_reports({app_id}, {version},"
            f" {one(repr(app_version + '-') + ' || md5(random()::text)')}, {text(USER)},"
            f" {one('current_date', 'date')}, {one('now()', 'timestamptz')},"
            f" {one('true', 'boolean')}, {text('stall')}, {text('native')},"
            f" {text(app_version)}, {null}, {null}, {text('17.2')}, {null},"
            f" {text('iPhone14,2')}, {null}, {one('NULL', 'bigint')}, {text('k1')},"
            f" {text('k2')}, {one('false', 'boolean')}, {text(json.dumps(['a']))},"
            f" {text(json.dumps(['a', 'b']))}, {text('[]')}, {text('{}')}, {text('{}')},"
            f" {text('{}')}, {text('{}')}, '{{}}'::uuid[], '{{}}'::text[], {null})")


def move_sql(app_id, app_version):
    """Reprocessing moving USER's report of APP_VERSION from k1/k2 to m1/m2,
    its delta counted in the day rows first (schema/026): the counters,
    then the report's keys (st_report_update_symbols)."""
    return (f"SELECT fold_group_deltas({app_id});"
            f" SELECT move_report({app_id}, r.id, 'k1', 'k2', 'm1', 'm2', '[\"m\"]',"
            f" '[\"m\",\"n\"]', current_date, r.received_at, '{app_version}', '17.2',"
            f" 'iPhone14,2', 'stall', '{USER}', r.duration_ms) FROM reports r"
            f" WHERE r.app_id = {app_id}"
            f" AND r.app_version = '{app_version}';"
            f" UPDATE reports SET key1 = 'm1', key2 = 'm2' WHERE app_id = {app_id}"
            f" AND app_version = '{app_version}'")


def counters(url, app_id):
    return psql(url, f"SELECT key, reports, users FROM groups WHERE app_id = {app_id}"
                     " ORDER BY level, key").splitlines()


def overlap(url, first_sql, second_sql):
    """Runs FIRST_SQL in a transaction left open for a second while
    SECOND_SQL runs, then lets both finish."""
    holder = subprocess.Popen(
        [PSQL, url, "-v", "ON_ERROR_STOP=1", "-Atc",
         f"BEGIN; {first_sql}; SELECT pg_sleep(1.5); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    psql(url, second_sql)
    _, err = holder.communicate(timeout=60)
    assert holder.returncode == 0, err


def test_one_user_counted_once_when_their_reports_overlap(db):
    bundle = create_app(db)["app"]
    app_id = int(psql(db, f"SELECT id FROM apps WHERE bundle_id = '{bundle}'"))
    version = psql(db, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app_id})"
                       " RETURNING version) SELECT version FROM made")
    # Whitelisted: no quota row, whose lock would serialize the user anyway.
    psql(db, f"INSERT INTO whitelist (app_id, user_id) VALUES ({app_id}, '{USER}')")

    # Two app versions: two group_dim_days rows of one user in one group.
    overlap(db, ingest_sql(app_id, version, "8.0.1"), ingest_sql(app_id, version, "8.0.2"))
    assert counters(db, app_id) == ["k1|2|1", "k2|2|1"]
    psql(db, move_sql(app_id, "8.0.1"))
    assert counters(db, app_id) == ["k1|1|1", "m1|1|1", "k2|1|1", "m2|1|1"]
    # Moving the user's last committed report out of k1 while a new one
    # arrives in it: the user stays.
    overlap(db, ingest_sql(app_id, version, "8.0.3"), move_sql(app_id, "8.0.2"))
    assert counters(db, app_id) == ["k1|1|1", "m1|2|1", "k2|1|1", "m2|2|1"]
    psql(db, move_sql(app_id, "8.0.3"))
    assert counters(db, app_id) == ["k1|0|0", "m1|3|1", "k2|0|0", "m2|3|1"]
    assert psql(db, f"SELECT count(*) FROM group_days WHERE app_id = {app_id}"
                    " AND key IN ('k1', 'k2')") == "0"
    assert psql(db, f"SELECT count(*) FROM group_dim_days WHERE app_id = {app_id}"
                    " AND key IN ('k1', 'k2')") == "0"


def test_a_move_locks_its_unchanged_level1_group_before_any_day_row(db):
    """A late dSYM that changes only a report's level-2 key still takes its
    level-1 group's row first, as ingest_reports does, before the day
    rows: reprocessing then offers the report's culprit to that row
    (offer_culprit), and taking it only at that point would reverse
    ingest's lock order and deadlock with a batch of the same group."""
    bundle = create_app(db)["app"]
    app_id = int(psql(db, f"SELECT id FROM apps WHERE bundle_id = '{bundle}'"))
    version = psql(db, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app_id})"
                       " RETURNING version) SELECT version FROM made")
    psql(db, f"INSERT INTO whitelist (app_id, user_id) VALUES ({app_id}, '{USER}')")
    psql(db, ingest_sql(app_id, version, "8.0.1"))
    move_k2_only = move_sql(app_id, "8.0.1").replace("'m1'", "'k1'")
    holder = subprocess.Popen(
        [PSQL, db, "-v", "ON_ERROR_STOP=1", "-Atc",
         f"BEGIN; {move_k2_only}; SELECT pg_sleep(2); COMMIT;"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.7)
    probe = subprocess.run(
        [PSQL, db, "-v", "ON_ERROR_STOP=1", "-Atc",
         "SET lock_timeout = '300ms'; SELECT key FROM groups"
         f" WHERE app_id = {app_id} AND level = 1 AND key = 'k1' FOR UPDATE"],
        capture_output=True, text=True)
    _, err = holder.communicate(timeout=60)
    assert holder.returncode == 0, err
    assert probe.returncode != 0 and "lock timeout" in probe.stderr, probe
    assert counters(db, app_id) == ["k1|1|1", "k2|0|0", "m2|1|1"]
