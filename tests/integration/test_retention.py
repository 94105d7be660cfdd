"""Issue 4 / SPEC §5: retention drops whole day partitions older than the
app's retention_days, and nothing newer; group counters keep their
history."""

import os
import subprocess
import time

from conftest import BIN, PSQL, create_app, fixture_of, run, stallscope
from ingest_util import Image, allow_everyone, fresh_id, native, post

DAY = 86400


def partitions(db, app_id):
    out = run(["/usr/lib/postgresql/15/bin/psql", db, "-Atc",
               "SELECT relname FROM pg_class WHERE relname LIKE "
               f"'reports_a{app_id}\\_%' AND relkind = 'r' ORDER BY 1"]).stdout
    return out.split()


def test_purge_drops_old_days_only(db, make_server, manifest):
    image = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
    app = create_app(db)
    app_id = run(["/usr/lib/postgresql/15/bin/psql", db, "-Atc",
                  f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'"]).stdout.strip()
    now = int(time.time())
    ids = {}
    # Servers purge at start too: keep a month while reports of past days
    # arrive, then go back to the default week before purging.
    for age in (10, 8, 6, 0):
        s = make_server(env={"STALLSCOPE_FAKE_NOW": str(now - age * DAY)})
        allow_everyone(s, app, retention_days=30)
        r = post(s, app, "/api/v1/ingest",
                 native(fresh_id(), image, [image.plain[0]], user=f"u{age}"))
        assert r.status == 202, r
        ids[age] = r.json["accepted"][0]["id"]
        s.stop()
    days = lambda: {p.rsplit("_", 1)[1] for p in partitions(db, app_id)}
    before = days()
    day_of = lambda age: time.strftime("%Y%m%d", time.gmtime(now - age * DAY))
    assert {day_of(a) for a in (10, 8, 6, 0)} <= before

    run(["/usr/lib/postgresql/15/bin/psql", db, "-Atc",
         f"UPDATE app_config SET retention_days = 7 WHERE app_id = {app_id}"])
    out = stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    assert '"dropped_partitions"' in out.stdout
    after = days()
    # Seven days kept: today and the six before it.
    assert day_of(10) not in after and day_of(8) not in after
    assert day_of(6) in after and day_of(0) in after
    assert day_of(-1) in after  # tomorrow's, made ahead

    server = make_server()
    for age, rid in ids.items():
        r = server.request("GET", f"/api/v1/reports/{rid}", token=app["admin_token"])
        assert r.status == (404 if age > 6 else 200), (age, r)
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups",
                            token=app["admin_token"]).json["groups"]
    assert sum(g["reports"] for g in groups) == 4  # history stays
    # A shorter retention, set through the API, applies at the next purge.
    server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                   body=b'{"retention_days": 1}', token=app["admin_token"])
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    assert day_of(6) not in days() and day_of(0) in days()


def test_two_purges_at_once_drop_each_day_once(db, make_server, manifest):
    """A purge (a server's retention pass, or `stallscope purge`) while
    another one has not committed the days it dropped waits for it, then
    finds those days gone and drops nothing twice: it does not fail on a
    partition the other dropped."""
    image = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
    app = create_app(db)
    app_id = run([PSQL, db, "-Atc",
                  f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'"]).stdout.strip()
    now = int(time.time())
    s = make_server(env={"STALLSCOPE_FAKE_NOW": str(now - 10 * DAY)})
    allow_everyone(s, app, retention_days=30)
    assert post(s, app, "/api/v1/ingest",
                native(fresh_id(), image, [image.plain[0]], user="old")).status == 202
    s.stop()
    old_day = time.strftime("%Y%m%d", time.gmtime(now - 10 * DAY))
    assert f"reports_a{app_id}_{old_day}" in partitions(db, app_id)
    run([PSQL, db, "-Atc", f"UPDATE app_config SET retention_days = 7 WHERE app_id = {app_id}"])
    first = subprocess.Popen([PSQL, db, "-v", "ON_ERROR_STOP=1", "-Aqt"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        first.stdin.write("BEGIN;\nSELECT drop_report_partitions("
                          f"{app_id}, current_date - 7);\n")
        first.stdin.flush()
        assert int(first.stdout.readline()) >= 1  # with the days made ahead of it
        second = subprocess.Popen(
            [str(BIN), "purge"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "STALLSCOPE_DATABASE_URL": db,
                 "STALLSCOPE_FAKE_NOW": str(now)})
        # It waits for the first purge's lock, not for anything else.
        deadline = time.time() + 30
        while run([PSQL, db, "-Atc", "SELECT count(*) FROM pg_locks"
                   " WHERE locktype = 'advisory' AND NOT granted"]).stdout.strip() != "1":
            assert second.poll() is None and time.time() < deadline, "the purge did not wait"
            time.sleep(0.05)
    finally:
        _, err = first.communicate("COMMIT;\n", timeout=60)
        assert first.returncode == 0, err
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert '"dropped_partitions"' in out
    assert f"reports_a{app_id}_{old_day}" not in partitions(db, app_id)
