"""Distinct users per group stay exact when two transactions of one user
overlap (schema/007: count_report takes the user's lock before asking
group_daily whether the user is new to the group). Driven through psql so
the overlap is certain: the first transaction holds its rows uncommitted
while the second counts."""

import subprocess
import time

from conftest import create_app

PSQL = "/usr/lib/postgresql/15/bin/psql"


def count_sql(app_id, version, delta=1):
    return (f"SELECT count_report({app_id}, 'k1', 'k2', '[\"a\"]', '[\"a\",\"b\"]', "
            f"'2026-11-20', '2026-11-20T10:00:00Z', '{version}', '17.2', 'iPhone14,2', "
            f"'stall', 'same-user', {delta})")


def psql(url, sql):
    return subprocess.run([PSQL, url, "-v", "ON_ERROR_STOP=1", "-Atc", sql],
                          capture_output=True, text=True, check=True).stdout.strip()


def counters(url, app_id):
    return psql(url, f"SELECT level, reports, users FROM groups WHERE app_id = {app_id}"
                     " ORDER BY level").splitlines()


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
    # Two app versions: two group_daily rows of one user in one group.
    overlap(db, count_sql(app_id, "8.0.1"), count_sql(app_id, "8.0.2"))
    assert counters(db, app_id) == ["1|2|1", "2|2|1"]
    # Taking one report out keeps the user (their other row remains);
    # taking the last one out removes them, even overlapping.
    overlap(db, count_sql(app_id, "8.0.1", -1), count_sql(app_id, "8.0.3"))
    assert counters(db, app_id) == ["1|2|1", "2|2|1"]
    psql(db, count_sql(app_id, "8.0.2", -1))
    psql(db, count_sql(app_id, "8.0.3", -1))
    assert counters(db, app_id) == ["1|0|0", "2|0|0"]
    assert psql(db, f"SELECT count(*) FROM group_daily WHERE app_id = {app_id}") == "0"
