"""Issue 4: a report whose dSYM is not uploaded yet shows `missing`, ranks
in dsyms/missing, and once the dSYM arrives it is symbolized again within
seconds and moves to its real groups with exact counters; `stallscope
reprocess` does the same by hand; traces are built from samples."""

import json
import time

import pytest

from conftest import (assert_storage_consistent, create_app, fixture_of, migrate, psql, run,
                      stallscope)
from ingest_util import (Image, allow_everyone, expected_frames, fresh_id, frames_of,
                         identities, native, post, report)


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


@pytest.fixture(scope="module")
def other(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="x86_64-O2"))


def groups(server, app, level):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?level={level}&limit=500",
                       token=app["admin_token"])
    assert r.status == 200, r
    return {g["key"]: g for g in r.json["groups"]}


def wait_for(predicate, seconds=10):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()


def test_missing_dsym_then_upload_regroups_exactly(server, db, image, other):
    app = create_app(db)
    allow_everyone(server, app)
    f = image.by_function
    stacks = [[image.inlined[0], f[1], f[2]], [f[3], f[4]], [f[3], f[5]]]
    ids = []
    for i, stack in enumerate(stacks * 2):
        r = post(server, app, "/api/v1/ingest",
                 native(fresh_id(), image, stack, user=f"u{i % 3}"))
        assert r.status == 202, r
        ids.append(r.json["accepted"][0]["id"])
    # A report of another image that stays missing: it must not move.
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), other, [other.plain[0]]))
    still_missing = r.json["accepted"][0]["id"]

    first = report(server, app, ids[0])
    assert first["pending"] and first["images"][0]["status"] == "missing"
    assert {fr["status"] for fr in first["threads"][0]["frames"]} == {"missing_symbols"}
    missing = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing",
                             token=app["upload_token"]).json["missing"]
    assert [(m["uuid"], m["reports"]) for m in missing] == [(image.uuid, 6), (other.uuid, 1)]
    before1, before2 = groups(server, app, 1), groups(server, app, 2)
    # Unsymbolized, the stacks group by image+offset: three groups.
    assert sorted(g["reports"] for g in before2.values()) == [1, 2, 2, 2]

    assert server.upload(app, image.dwarf).status in (200, 201)
    moved = wait_for(lambda: not report(server, app, ids[-1])["pending"])
    assert moved, "reports were not reprocessed within 10 s"
    for rid, stack in zip(ids, stacks * 2):
        rep = report(server, app, rid)
        assert not rep["pending"]
        assert frames_of(rep["threads"][0]["frames"]) == expected_frames(image, stack)
    after1, after2 = groups(server, app, 1), groups(server, app, 2)
    # Totals unchanged: every report is in exactly one group per level.
    assert sum(g["reports"] for g in after1.values()) == 7
    assert sum(g["reports"] for g in after2.values()) == 7
    # The counts now follow the symbolized identities.
    want = {}
    for stack in stacks:
        key = tuple(identities(image.name, expected_frames(image, stack))[:2])
        want[key] = want.get(key, 0) + 2
    got = {tuple(g["frames"]): g["reports"] for g in after1.values()}
    for key, n in want.items():
        assert got[key] == n
    # Old unsymbolized groups are empty and gone from the list: only the
    # other image's report is still grouped by offsets.
    assert sum(g["reports"] for g in after1.values()
               if any("+0x" in fr for fr in g["frames"])) == 1
    assert report(server, app, still_missing)["pending"]
    missing = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing",
                             token=app["admin_token"]).json["missing"]
    assert [m["uuid"] for m in missing] == [other.uuid]
    # Distinct users are exact too.
    want_users = {}
    for i, stack in enumerate(stacks * 2):
        key = tuple(identities(image.name, expected_frames(image, stack))[:2])
        want_users.setdefault(key, set()).add(f"u{i % 3}")
    users = {tuple(g["frames"]): g["users"] for g in after1.values()}
    for key, who in want_users.items():
        assert users[key] == len(who)
    assert before1 != after1
    assert_storage_consistent(db, app["app"])


def waiting_report(server, db, image):
    """A new app of DB and a report of it waiting for IMAGE, through
    SERVER: (app, report id, stack)."""
    app = create_app(db)
    allow_everyone(server, app)
    stack = [image.plain[0], image.by_function[2]]
    rid = post(server, app, "/api/v1/ingest", native(fresh_id(), image, stack)).json[
        "accepted"][0]["id"]
    assert report(server, app, rid)["pending"]
    return app, rid, stack


def peer_file_sql(server, db, app, image):
    """What another instance's upload of IMAGE leaves behind: a symcache in
    SERVER's data dir (shared), now, and the statement adding its row."""
    rel = f"symcaches/peer-{image.uuid}.symcache"
    (server.data_dir / "symcaches").mkdir(exist_ok=True)
    made = stallscope("symcache", str(image.dwarf), "-o", str(server.data_dir / rel))
    # The format version this build writes: an older one would be rebuilt.
    version = json.loads(made.stdout)["version"]
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    return ("INSERT INTO debug_files (app_id, uuid, arch, name, kind, has_dwarf, functions,"
            " file_size, symcache_size, symcache_version, debug_path, symcache_path)"
            f" VALUES ({app_id}, '{image.uuid}', '{image.arch}', '{image.name}', 'dsym',"
            f" true, 1, 1, 1, {version}, '{rel}', '{rel}')")


def test_reprocess_command_and_other_instances_uploads(cluster, make_server, image):
    """An upload taken by another instance is only in the database: a
    server whose periodic look is an hour away leaves the report waiting,
    and `stallscope reprocess` moves it. A database of its own: the
    command walks every waiting report, and no server moves what other
    tests left waiting for files they inserted by hand."""
    db = cluster.create_db("it_reprocess_command")
    migrate(db)
    server = make_server(env={"STALLSCOPE_REPROCESS_INTERVAL": "3600"}, db_url=db)
    app, rid, stack = waiting_report(server, db, image)
    psql(db, peer_file_sql(server, db, app, image))
    time.sleep(1)
    assert report(server, app, rid)["pending"]  # nobody told this server
    out = stallscope("reprocess", db_url=db,
                     extra_env={"STALLSCOPE_DATA_DIR": str(server.data_dir)})
    assert json.loads(out.stdout) == {"reprocessed": 1}
    rep = report(server, app, rid)
    assert not rep["pending"]
    assert frames_of(rep["threads"][0]["frames"]) == expected_frames(image, stack)
    again = stallscope("reprocess", db_url=db,
                       extra_env={"STALLSCOPE_DATA_DIR": str(server.data_dir)})
    assert json.loads(again.stdout) == {"reprocessed": 0}
    assert_storage_consistent(db)


def test_reprocess_command_walks_every_app_and_day(cluster, make_server, image):
    """The sweep walks the days that have waiting reports, app by app and
    day by day (schema/030 keeps the waits on the reports' rows): reports
    of two apps on three days, a file of each app stored where no server
    hears of it, and `stallscope reprocess` moves exactly the reports of
    the app whose file is there, then the other's, then none."""
    db = cluster.create_db("it_reprocess_days")
    migrate(db)
    now = int(time.time())
    apps = [create_app(db), create_app(db)]
    stack = [image.plain[0], image.by_function[2]]
    ids = {0: [], 1: []}
    for age in (2, 1, 0):
        s = make_server(env={"STALLSCOPE_FAKE_NOW": str(now - age * 86400),
                             "STALLSCOPE_REPROCESS_INTERVAL": "3600"}, db_url=db)
        for n, app in enumerate(apps):
            allow_everyone(s, app, retention_days=30)
            for i in range(2):
                r = post(s, app, "/api/v1/ingest",
                         native(fresh_id(), image, stack, user=f"u{age}-{i}"))
                assert r.status == 202, r
                ids[n].append(r.json["accepted"][0]["id"])
        last = s
        s.stop()
    app_ids = [psql(db, f"SELECT id FROM apps WHERE bundle_id = '{a['app']}'") for a in apps]

    def pending(n):
        return psql(db, f"SELECT count(DISTINCT received_day) || '|' || count(*) FROM reports"
                        f" WHERE app_id = {app_ids[n]} AND pending")

    def reprocess():
        out = stallscope("reprocess", db_url=db,
                         extra_env={"STALLSCOPE_DATA_DIR": str(last.data_dir),
                                    "STALLSCOPE_FAKE_NOW": str(now)})
        return json.loads(out.stdout)["reprocessed"]

    assert pending(0) == pending(1) == "3|6"
    psql(db, peer_file_sql(last, db, apps[1], image))
    assert reprocess() == 6
    assert (pending(0), pending(1)) == ("3|6", "0|0")
    psql(db, peer_file_sql(last, db, apps[0], image))
    assert reprocess() == 6
    assert pending(0) == "0|0"
    assert reprocess() == 0
    assert psql(db, "SELECT count(*) FROM reports WHERE waits IS NOT NULL") == "0"
    assert psql(db, "SELECT count(*) FROM image_waits") == "0"
    assert_storage_consistent(db)


def test_trace_from_samples_balances(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    f = image.by_function
    a, b, c = [f[1], f[2]], [image.inlined[0], f[2]], [f[3]]
    samples = [(0, a), (50, a), (100, b), (150, c), (200, a)]
    rep = native(fresh_id(), image, a, duration_ms=400)
    rep["samples"] = [{"t_ms": t, "frames": [hex(image.runtime(x, i)) for i, x in enumerate(s)]}
                      for t, s in samples]
    rid = post(server, app, "/api/v1/ingest", rep).json["accepted"][0]["id"]
    # The heaviest stack (a, three samples of five) is the representative.
    shown = report(server, app, rid)
    assert shown["stack"]["source"] == "samples" and "thread" not in shown["stack"]
    assert frames_of(shown["stack"]["frames"]) == expected_frames(image, a)
    r = server.request("GET", f"/api/v1/reports/{rid}/trace", token=app["admin_token"])
    assert r.status == 200, r
    events = [e for e in r.json["traceEvents"] if e["ph"] in "BE"]
    # Every B has its E, nested properly, times never going back.
    stack, last = [], -1
    for e in events:
        assert e["ts"] >= last
        last = e["ts"]
        if e["ph"] == "B":
            stack.append(e["name"])
        else:
            assert stack.pop() == e["name"]
    assert stack == []
    assert last == 400 * 1000
    # At each sample's time, the open frames are that sample's stack,
    # root first, as llvm-symbolizer names it.
    def open_at(ts):
        s = []
        for e in events:
            if e["ts"] > ts:
                break
            if e["ph"] == "B":
                s.append(e["name"])
            else:
                s.pop()
        return s
    for t, st in samples:
        names = [fn for chain in reversed(expected_frames(image, st)) for (fn, _, _) in
                 reversed(chain)]
        assert open_at(t * 1000) == names, t
    # Without samples: the representative stack over the duration.
    plain = post(server, app, "/api/v1/ingest",
                 native(fresh_id(), image, c, duration_ms=1200)).json["accepted"][0]["id"]
    t2 = server.request("GET", f"/api/v1/reports/{plain}/trace", token=app["admin_token"])
    ends = [e["ts"] for e in t2.json["traceEvents"] if e["ph"] == "E"]
    assert ends and max(ends) == 1200 * 1000
    other_app = create_app(db)
    assert server.request("GET", f"/api/v1/reports/{rid}/trace",
                          token=other_app["admin_token"]).status == 404
    assert server.request("GET", "/api/v1/reports/999999999/trace",
                          token=app["admin_token"]).status == 404
    assert server.request("GET", "/api/v1/reports/abc", token=app["admin_token"]).status == 404
