"""`stallscope check` (SPEC §12, issue 43): after real ingest — reports
waiting for a dSYM, a whitelisted user, days backfilled, the dSYM uploaded
and the reports moved, deltas left unfolded — every equality holds and it
exits 0; then, each in a database of its own (a copy of that one), one
thing is broken by hand and it exits 1 naming it."""
import datetime
import json
import threading
import time

import pytest

from conftest import (_new_server, assert_storage_consistent, create_app, fold,
                      migrate, psql, run, stallscope)
from ingest_util import allow_everyone, fresh_id, native, post
from test_reprocess import image, other  # noqa: F401 (fixtures: the two fixture dSYMs)

SOURCE = "it_check"


def backfill(server, app, body, day):
    r = server.request("POST", f"/api/v1/apps/{app['app']}/backfill?received_at={day}T10:00:00Z",
                       body=json.dumps(body).encode(), token=app["admin_token"])
    assert r.status == 202, r


def ingest(server, app, image, n, prefix, version="1.0"):
    f = image.by_function
    stacks = [[image.inlined[0], f[1], f[2]], [f[3], f[4]], [f[3], f[5]]]
    for i in range(n):
        body = native(fresh_id(), image, stacks[i % 3], user=f"{prefix}{i % 4}",
                      app_version=f"{version}.{i % 2}", duration_ms=100 * i)
        r = post(server, app, "/api/v1/ingest", body)
        assert r.status == 202, r


def days_ago(n):
    return (datetime.datetime.now(datetime.timezone.utc).date()
            - datetime.timedelta(days=n)).isoformat()


@pytest.fixture(scope="module")
def stored(cluster, tmp_root, image, other):
    """SOURCE after real ingest, its server stopped (a database copied as a
    template must have no session): two apps, deltas waiting."""
    db = cluster.create_db(SOURCE)
    migrate(db)
    # Deltas are folded only when asked (fold() below), so some wait.
    server = _new_server(db, tmp_root, {"STALLSCOPE_FOLD_INTERVAL": "3600"}, "check").start()
    try:
        app, app2 = create_app(db), create_app(db)
        for a in (app, app2):
            allow_everyone(server, a)
        r = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/vip",
                           body=b'{"note":"tester"}', token=app["admin_token"])
        assert r.status == 200, r
        ingest(server, app, image, 12, "u")
        ingest(server, app, image, 2, "vip")
        for n in (1, 3):
            backfill(server, app, native(fresh_id(), image, [image.by_function[6]],
                                         user=f"old{n}"), days_ago(n))
        # Of an image whose dSYM never comes: it keeps waiting.
        assert post(server, app, "/api/v1/ingest",
                    native(fresh_id(), other, [other.plain[0]])).status == 202
        fold(db)
        ingest(server, app, image, 6, "w", version="2.0")
        app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
        waiting = f"SELECT count(*) FROM reports WHERE app_id = {app_id} AND pending"
        assert psql(db, waiting) == "23"
        # Moved while some of their deltas wait, others counted.
        assert server.upload(app, image.dwarf).status in (200, 201)
        deadline = time.monotonic() + 30
        while psql(db, waiting) != "1":
            assert time.monotonic() < deadline, "reports were not reprocessed"
            time.sleep(0.2)
        ingest(server, app, image, 5, "late", version="3.0")
        ingest(server, app2, image, 4, "x")
    finally:
        assert server.stop() == 0, server.log()[-3000:]
    deltas = f"SELECT count(*) FROM group_deltas WHERE app_id = {app_id}"
    assert int(psql(db, deltas, fold_first=False)) >= 5
    return {"db": db, "app": app["app"], "app2": app2["app"], "a": app_id,
            "other_uuid": other.uuid}


def copy_of(cluster, name):
    """A database of its own holding what SOURCE holds."""
    run(["/usr/lib/postgresql/15/bin/psql", cluster.superuser_url("postgres"), "-qc",
         f"CREATE DATABASE {name} TEMPLATE {SOURCE}"])
    # Grants CONNECT to the server's role, as for every database.
    return cluster.create_db(name)


def check(db, *args, read_only=False):
    env = {"PGOPTIONS": "-c default_transaction_read_only=on"} if read_only else None
    p = stallscope("check", *args, db_url=db, extra_env=env, check=False)
    return p.returncode, p.stdout


def test_check_agrees_after_ingest_waits_and_reprocessing(stored, cluster):
    # In a session that may not write: it only reads.
    rc, out = check(stored["db"], read_only=True)
    assert rc == 0 and out.splitlines()[-1].startswith("ok: "), out
    assert len(out.splitlines()) == 1, out
    rc, out = check(stored["db"], "--app", stored["app2"], read_only=True)
    assert rc == 0 and "ok: " in out, out
    # Once folded, the same.
    db = copy_of(cluster, "it_check_folded")
    fold(db)
    assert psql(db, "SELECT count(*) FROM group_deltas", fold_first=False) == "0"
    assert_storage_consistent(db)


def test_check_agrees_while_a_server_ingests_folds_and_moves(cluster, make_server, image):
    """Beside a server storing reports, folding every second and moving
    the reports a dSYM arrived for, each run sees every transaction whole:
    no disagreement at any moment."""
    db = cluster.create_db("it_check_live")
    migrate(db)
    server = make_server(db_url=db)
    app = create_app(db)
    allow_everyone(server, app)
    failures = []

    def load():
        try:
            ingest(server, app, image, 30, "a")
            assert server.upload(app, image.dwarf).status in (200, 201)
            ingest(server, app, image, 30, "b", version="2.0")
        except AssertionError as e:  # seen by the test below
            failures.append(e)

    loader = threading.Thread(target=load)
    loader.start()
    runs = []
    while loader.is_alive() or len(runs) < 3:
        runs.append(check(db))
    loader.join()
    assert not failures, failures
    assert all(rc == 0 for rc, _ in runs), [out for rc, out in runs if rc]
    deadline = time.monotonic() + 30
    while psql(db, "SELECT count(*) FROM reports WHERE pending") != "0":
        assert time.monotonic() < deadline, "reports were not reprocessed"
        time.sleep(0.2)
    assert_storage_consistent(db)


def test_check_refuses_an_unknown_app(stored):
    p = stallscope("check", "--app", "com.nobody", db_url=stored["db"], check=False)
    assert p.returncode == 1 and "no app com.nobody" in p.stderr, p


def test_partitions_retention_has_yet_to_drop_are_a_note(stored, cluster):
    db = copy_of(cluster, "it_check_old_partition")
    psql(db, f"SELECT ensure_report_partition({stored['a']}, current_date - 40)")
    rc, out = check(db)
    assert rc == 0, out
    assert f"note: retention: app {stored['app']}" in out and "7 days kept" in out, out


def picks(db, a):
    """The rows the cases below break, read from the copy."""
    q = lambda sql: psql(db, sql, fold_first=False).split("|")  # noqa: E731
    key2, day2 = q(f"SELECT key, day FROM group_days WHERE app_id = {a} AND level = 2"
                   " ORDER BY reports DESC, key LIMIT 1")
    key1, day1 = q(f"SELECT key, day FROM group_facet_days WHERE app_id = {a} AND level = 1"
                   " AND dim = 'version' ORDER BY key, day LIMIT 1")
    tree = q(f"SELECT key1, key2, day, app_version FROM group_stack_days WHERE app_id = {a}"
             " ORDER BY key1, key2, day, app_version LIMIT 1")
    stack, = q(f"SELECT stack_at(symbolized_stacks, 2) FROM reports WHERE app_id = {a}"
               " AND NOT pending ORDER BY id LIMIT 1")
    report, = q(f"SELECT min(id) FROM reports WHERE app_id = {a}")
    delta, = q(f"SELECT min(report) FROM group_deltas WHERE app_id = {a}")
    return {"key1": key1, "day1": day1, "key2": key2, "day2": day2, "tree": tree,
            "stack": stack, "report": report, "delta": delta, "today": days_ago(0),
            "past": days_ago(3)}


# (what is broken, the SQL breaking it, what the output must say).
CASES = {
    "groups_counter": (
        "UPDATE groups SET reports = reports + 1 WHERE app_id = {a} AND level = 1"
        " AND key = '{key1}'",
        ["group counters: app {app}, level 1, group {key1}: expected"]),
    "group_days_row": (
        "UPDATE group_days SET reports = reports + 1 WHERE app_id = {a} AND level = 2"
        " AND key = '{key2}' AND day = '{day2}'",
        ["dimension rows: app {app}, level 2, group {key2}, day {day2}: expected",
         "reports per group and day: app {app}, level 2, group {key2}, day {day2}:"]),
    "facet_row": (
        "UPDATE group_facet_days SET reports = reports + 1 WHERE app_id = {a} AND level = 1"
        " AND key = '{key1}' AND day = '{day1}' AND dim = 'version'"
        " AND value = (SELECT min(value) FROM group_facet_days WHERE app_id = {a}"
        " AND level = 1 AND key = '{key1}' AND day = '{day1}' AND dim = 'version')",
        ["facet rows: app {app}, level 1, group {key1}, day {day1}, dimension version:"]),
    "image_waits_count": (
        "UPDATE image_waits SET reports = reports + 1 WHERE app_id = {a}"
        " AND uuid = '{other_uuid}'",
        ["image waits: app {app}, day {today}, image {other_uuid}, missing:"
         " expected 1 reports (the day's reports waiting), found 2 reports (image_waits)"]),
    "stack_deleted": (
        "DELETE FROM stacks WHERE app_id = {a} AND hash = '{stack}'",
        ["stacks: app {app}, day ", "stack {stack} of ", "found no row (stacks)"]),
    "partition_dropped": (
        "DROP TABLE reports_a{a}_{past_compact}",
        ["partitions: app {app}, day {past}, 1 rows of report_keys:"
         " expected reports_a{a}_{past_compact}"]),
    "delta_lost": (
        "DELETE FROM group_deltas WHERE app_id = {a} AND report = {delta}",
        ["reports per group and day: app {app}, level 1, group ",
         "call tree: app {app}, level 2"]),
    "report_key_lost": (
        "DELETE FROM report_keys WHERE app_id = {a} AND id = {report}",
        ["report keys: app {app}, day ", "report {report}: expected no row (report_keys)"]),
    "quota_count": (
        "UPDATE user_quota SET reports = reports + 1 WHERE app_id = {a} AND user_id = 'u1'",
        ["quota counts: app {app}, day {today}, user u1:"]),
    "pick_list": (
        "UPDATE app_dimensions SET reports = reports + 2 WHERE app_id = {a}"
        " AND day = '{today}' AND dim = 'device'",
        ["pick lists: app {app}, day {today}, device 'iPhone14,2':"]),
    "call_tree": (
        "UPDATE group_stack_days SET reports = reports + 1 WHERE app_id = {a}"
        " AND key1 = '{tree[0]}' AND key2 = '{tree[1]}' AND day = '{tree[2]}'"
        " AND app_version = '{tree[3]}'",
        ["call tree: app {app}, level 2, group {tree[1]}, day {tree[2]},"
         " under level-1 group {tree[0]}, version '{tree[3]}':"]),
    "every_facet_row": (
        "UPDATE group_facet_days SET reports = reports + 1 WHERE app_id = {a}",
        ["facet rows: app {app}, level 1, group ", "facet rows … and "]),
    "level_2_parent": (
        "UPDATE groups SET parent_key = 'ffffffffffffffff' WHERE app_id = {a} AND level = 2"
        " AND key = '{key2}'",
        ["group keys: app {app}, level 2, group {key2}", "level-2 group under ffffffffffffffff",
         "levels: app {app}, level 1"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_names_what_disagrees(stored, cluster, case):
    db = copy_of(cluster, f"it_check_{case}")
    values = dict(stored, **picks(db, stored["a"]))
    values["past_compact"] = values["past"].replace("-", "")
    values["other_uuid"] = values["other_uuid"].upper()
    sql, said = CASES[case]
    psql(db, sql.format(**values), fold_first=False)
    rc, out = check(db)
    assert rc == 1, out
    for text in said:
        assert text.format(**values) in out, (text.format(**values), out)
    assert out.splitlines()[-1].endswith("disagreements of every app"), out
    # The other app's rows still agree.
    rc, out = check(db, "--app", stored["app2"])
    assert rc == 0, out
