"""Issue 25 item 2: reprocessing is driven by the arrivals of debug files.
Every server learns of an arrival (NOTIFY, or the arrivals table read after
its listening connection came back) and moves the reports waiting for that
UUID, each exactly once whichever instance does it; dsyms/missing reads a
counter kept exact through ingest, upload, purge and retention; a database
of the schema before (01b4bf5) converts with `stallscope migrate`."""

import json
import re
import subprocess
import threading
import time

from conftest import (PSQL, REPO, assert_storage_consistent, create_app, fixture_of, migrate,
                      psql, stallscope)
from ingest_util import (Image, allow_everyone, expected_frames, fresh_id, frames_of, native,
                         post, report)
from test_reprocess import peer_file_sql, wait_for, waiting_report

DAY = 86400


def app_id_of(db, app):
    return psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")


def reprocessed(server):
    text = server.request("GET", "/metrics").raw.decode()
    return int(re.search(r"^stallscope_reprocessed_reports_total (\d+)$", text, re.M)[1])


def missing(server, app, query=""):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms/missing{query}",
                       token=app["admin_token"])
    assert r.status == 200, r
    return r.json["missing"]


def pending(server, app, ids):
    return [rid for rid in ids if report(server, app, rid)["pending"]]


def images(manifest):
    return (Image(fixture_of(manifest, "dwarf", variant="arm64-O2")),
            Image(fixture_of(manifest, "dwarf", variant="x86_64-O2")))


def test_two_instances_move_each_report_once(cluster, make_server, tmp_root, manifest):
    """An upload on instance A: both A (woken) and B (notified) look at the
    arrival; every waiting report moves exactly once, none stays pending."""
    db = cluster.create_db("it_arrivals_two")
    migrate(db)
    shared = tmp_root / "arrivals-shared-data"
    env = {"STALLSCOPE_REPROCESS_INTERVAL": "3600", "STALLSCOPE_DATA_DIR": str(shared)}
    a, b = make_server(env=env, db_url=db), make_server(env=env, db_url=db)
    image, other = images(manifest)
    app = create_app(db)
    allow_everyone(b, app)
    f = image.by_function
    stacks = [[f[1], f[2]], [f[3], f[4]], [image.inlined[0], f[5]]]
    ids = []
    for i in range(60):
        r = post(b if i % 2 else a, app, "/api/v1/ingest",
                 native(fresh_id(), image, stacks[i % 3], user=f"u{i % 7}"))
        assert r.status == 202, r
        ids.append((r.json["accepted"][0]["id"], stacks[i % 3]))
    stays = post(b, app, "/api/v1/ingest", native(fresh_id(), other, [other.plain[0]]))
    stays = stays.json["accepted"][0]["id"]
    assert [m["reports"] for m in missing(b, app)] == [60, 1]

    assert a.upload(app, image.dwarf).status in (200, 201)
    assert wait_for(lambda: not pending(b, app, [rid for rid, _ in ids]), 20), \
        "reports left pending"
    # Exactly once: the two instances' moves add up to the reports.
    assert wait_for(lambda: reprocessed(a) + reprocessed(b) == 60)
    time.sleep(1)
    assert reprocessed(a) + reprocessed(b) == 60
    for rid, stack in ids:
        assert frames_of(report(a, app, rid)["threads"][0]["frames"]) == \
            expected_frames(image, stack)
    groups = a.request("GET", f"/api/v1/apps/{app['app']}/groups?level=1&limit=500",
                       token=app["admin_token"]).json["groups"]
    assert sum(g["reports"] for g in groups) == 61
    assert report(a, app, stays)["pending"]
    assert [(m["uuid"], m["reports"]) for m in missing(a, app)] == [(other.uuid, 1)]
    aid = app_id_of(db, app)
    assert psql(db, f"SELECT sum(length(waits) / 16) FROM reports WHERE app_id = {aid}") == "1"
    assert_storage_consistent(db)


def test_lost_notification_is_read_after_reconnect(cluster, make_server, manifest):
    """The listening connection is killed while another instance's file
    commits with its NOTIFY: the server listens again, reads the arrivals
    after the last it saw, and moves the report; its periodic look is an
    hour away."""
    db = cluster.create_db("it_arrivals_lost")
    migrate(db)
    server = make_server(env={"STALLSCOPE_REPROCESS_INTERVAL": "3600"}, db_url=db)
    image, _ = images(manifest)
    app, rid, stack = waiting_report(server, db, image)
    listener = ("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND application_name = 'stallscope-listener'")
    first = wait_for(lambda: psql(db, listener))
    assert first
    # What another instance's upload leaves: its file, its arrival and
    # NOTIFY, in one transaction.
    aid = app_id_of(db, app)
    psql(db, f"""SELECT pg_terminate_backend(pid) FROM ({listener}) AS l;
        {peer_file_sql(server, db, app, image)};
        INSERT INTO debug_file_arrivals (app_id, uuid) VALUES ({aid}, '{image.uuid}');
        NOTIFY stallscope_arrivals""")
    assert wait_for(lambda: not report(server, app, rid)["pending"]), "not moved"
    assert frames_of(report(server, app, rid)["threads"][0]["frames"]) == \
        expected_frames(image, stack)
    again = wait_for(lambda: psql(db, listener))
    assert again and again != first
    assert reprocessed(server) == 1


def test_dsyms_missing_counts_exact(db, make_server, manifest):
    """dsyms/missing through ingest on several days, an upload, a purge
    and a shorter retention, against counts kept by the test."""
    image, other = images(manifest)
    app = create_app(db)
    now = int(time.time())
    day_of = lambda age: time.strftime("%Y-%m-%d", time.gmtime(now - age * DAY))
    posted = []  # (age in days, image)
    plan = [(12, image), (12, other), (9, image), (3, other), (3, other), (1, image),
            (0, image), (0, image), (0, other)]
    for age in sorted({age for age, _ in plan}, reverse=True):
        s = make_server(env={"STALLSCOPE_FAKE_NOW": str(now - age * DAY),
                             "STALLSCOPE_REPROCESS_INTERVAL": "3600"})
        allow_everyone(s, app, retention_days=30)
        for i, (a, img) in enumerate(plan):
            if a == age:
                r = post(s, app, "/api/v1/ingest",
                         native(fresh_id(), img, [img.plain[0]], user=f"u{i}"))
                assert r.status == 202, r
                posted.append((age, img))
        s.stop()
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(now)})

    def expected(kept):
        rows = {}
        for age, img in kept:
            n, last = rows.get(img.uuid, (0, None))
            rows[img.uuid] = (n + 1, max(last or day_of(age), day_of(age)))
        return sorted(((u, n, last) for u, (n, last) in rows.items()),
                      key=lambda x: (-x[1], x[0]))

    def shown():
        # last_seen is a time (RFC 3339, issue 42): its day is the posting's.
        rows = missing(server, app)
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", m["last_seen"])
                   for m in rows), rows
        return [(m["uuid"], m["reports"], m["last_seen"][:10]) for m in rows]

    assert shown() == expected(posted)
    (row,) = [m for m in missing(server, app) if m["uuid"] == image.uuid]
    assert (row["name"], row["arch"], row["system"]) == (image.name, image.arch, False)
    assert missing(server, app, "?images=system") == []

    # Purge with a week's retention: the days before go, with their counts.
    aid = app_id_of(db, app)
    psql(db, f"UPDATE app_config SET retention_days = 7 WHERE app_id = {aid}")
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    posted = [(age, img) for age, img in posted if age < 7]
    assert shown() == expected(posted)

    # An upload moves the image's reports out of the list.
    assert server.upload(app, other.dwarf).status in (200, 201)
    posted = [(age, img) for age, img in posted if img is not other]
    # dsyms/missing hides an image with a file at once; its reports have
    # moved when the reprocessor has deleted the arrival.
    assert wait_for(lambda: psql(db, "SELECT count(*) FROM debug_file_arrivals"
                                     f" WHERE uuid = '{other.uuid}'") == "0")
    assert shown() == expected(posted)

    # A shorter retention through the API applies at the next purge: the
    # daily one of the server holding the database-wide chores (here the
    # suite's first server, docs/STORAGE.md "Leases"), or the command's.
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=b'{"retention_days": 1}', token=app["admin_token"])
    assert r.status == 200, r
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    posted = [(age, img) for age, img in posted if age < 1]
    assert wait_for(lambda: shown() == expected(posted)), shown()
    # The counter and the waits agree row for row, read in one snapshot
    # (two reads let a reprocessing commit fall between them).
    rows = "string_agg(concat_ws(' ', uuid, reason, n), ', ' ORDER BY uuid, reason)"
    counted, waiting = psql(
        db, f"SELECT (SELECT {rows} FROM (SELECT uuid, reason, sum(reports) AS n"
            f"  FROM image_waits WHERE app_id = {aid} GROUP BY 1, 2) c),"
            f" (SELECT {rows} FROM (SELECT w.uuid, wait_reason(w.code) AS reason, count(*) AS n"
            "  FROM reports r, unnest(wait_uuids(r.waits), string_to_array(r.wait_reasons, NULL))"
            f"  AS w(uuid, code) WHERE r.app_id = {aid} GROUP BY 1, 2) w)").split("|")
    assert counted == waiting


def shipped_schema(tmp_path):
    """The schema folder as commit 01b4bf5 shipped it (migrations 001-015
    and its function files)."""
    out = tmp_path / "schema-01b4bf5"
    (out / "functions").mkdir(parents=True)
    names = subprocess.run(["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", "01b4bf5",
                            "schema/"], check=True, capture_output=True, text=True).stdout
    for name in names.split():
        text = subprocess.run(["git", "-C", str(REPO), "show", f"01b4bf5:{name}"], check=True,
                              capture_output=True, text=True).stdout
        (out / name.removeprefix("schema/")).write_text(text)
    return out


def test_upgrade_keeps_dsyms_missing_and_moves_on_upload(cluster, tmp_path, make_server,
                                                         manifest):
    """Reports waiting at the schema of 01b4bf5 (stored by its
    ingest_reports, with their native raw form): after `stallscope
    migrate` dsyms/missing answers byte for byte as before, and an upload
    moves them."""
    url = cluster.create_db("it_arrivals_upgrade")
    migrate(url, extra_env={"STALLSCOPE_SCHEMA_DIR": str(shipped_schema(tmp_path))})
    image, other = images(manifest)
    made = create_app(url)
    app = app_id_of(url, made)
    version = psql(url, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app})"
                        " RETURNING version) SELECT version FROM made")
    # Recent days: the server purges what is older than a week at start.
    day = lambda age: time.strftime("%Y-%m-%d", time.gmtime(time.time() - age * DAY))
    plan = [(image, f"{day(2)} 09:00:00+00"), (image, f"{day(1)} 09:00:00+00"),
            (other, f"{day(1)} 10:00:00+00"), (image, f"{day(0)} 00:00:00+00")]
    ids = []
    for i, (img, at) in enumerate(plan):
        rid = f"old-{i}"
        raw = native(rid, img, [img.plain[0]], user=f"u{i}")
        wait = [{"uuid": img.uuid, "image_name": img.name, "arch": img.arch,
                 "reason": "missing"}]
        q = lambda v: "'" + v.replace("'", "''") + "'"
        out = psql(url, f"""SELECT outcome, report FROM ingest_reports({app}, {version},
            ARRAY[{q(rid)}], ARRAY['u{i}'], ARRAY[{q(at[:10])}]::date[],
            ARRAY[{q(at)}]::timestamptz[], ARRAY[true], ARRAY['stall'], ARRAY['native'],
            ARRAY['8.0.1'], ARRAY[NULL]::text[], ARRAY['iOS'], ARRAY['17.2'],
            ARRAY[NULL]::text[], ARRAY['iPhone14,2'], ARRAY[NULL]::text[], ARRAY[2500::bigint],
            ARRAY['k1-{i % 2}'], ARRAY['k2-{i}'], ARRAY[true], ARRAY['["f1"]'], ARRAY['["f2"]'],
            ARRAY[{q(json.dumps(wait))}], ARRAY[{q(json.dumps(raw))}],
            ARRAY['{{"images": [], "threads": []}}'])""")
        outcome, rid_id = out.split("|")
        assert outcome == "stored"
        ids.append(int(rid_id))
    # The reply the old schema gives: 01b4bf5's statement (store/groups.c),
    # first page without a cursor.
    old_sql = ("SELECT coalesce(json_agg(json_build_object('uuid', m.uuid, 'arch', m.arch,"
               " 'name', m.name, 'system', false, 'reports', m.reports,"
               " 'last_seen', m.last_seen, 'cursor', m.reports || '.' || m.hex)"
               " ORDER BY m.reports DESC, m.uuid), '[]')::text FROM ("
               " SELECT upper(w.uuid::text) AS uuid, replace(w.uuid::text, '-', '') AS hex,"
               " max(w.arch) AS arch, max(w.image_name) AS name,"
               " count(DISTINCT w.report) AS reports,"
               " to_char(max(w.received_day), 'YYYY-MM-DD') AS last_seen"
               f" FROM report_waits w WHERE w.app_id = {app} AND w.reason = 'missing'"
               " GROUP BY w.uuid ORDER BY reports DESC, w.uuid) AS m")
    old_reply = psql(url, old_sql)

    out = migrate(url).stdout
    assert "applied 017_arrivals_and_image_waits.sql" in out
    server = make_server(db_url=url)
    r = server.request("GET", f"/api/v1/apps/{made['app']}/dsyms/missing",
                       token=made["admin_token"])
    assert r.status == 200, r
    old_rows = json.loads(old_reply)
    assert [(m["uuid"], m["reports"]) for m in old_rows] == [(image.uuid, 3), (other.uuid, 1)]
    # The statement's cursor is the reply's next_cursor, not a member; since
    # issue 42 (schema/046) the image is named by its basename, last_seen
    # is the latest report's time and the versions are listed, all from
    # the reports waiting; since issue 44 a row says its kind (an image,
    # or an Android build's method mapping) and build (null for images).
    latest = {}
    for img, at in plan:
        stamp = at[:10] + "T" + at[11:19] + "Z"
        latest[img.uuid] = max(latest.get(img.uuid, stamp), stamp)
    assert r.json["missing"] == [
        {**{k: v for k, v in m.items() if k != "cursor"},
         "name": m["name"].rsplit("/", 1)[-1],
         "path": m["name"] if "/" in m["name"] else None,
         "last_seen": latest[m["uuid"]], "app_versions": ["8.0.1"],
         "kind": "image", "build": None}
        for m in old_rows]
    page = server.request("GET", f"/api/v1/apps/{made['app']}/dsyms/missing?limit=1",
                          token=made["admin_token"]).json
    assert page["next_cursor"] == old_rows[0]["cursor"]
    page = server.request("GET", f"/api/v1/apps/{made['app']}/dsyms/missing?limit=1"
                          f"&cursor={page['next_cursor']}", token=made["admin_token"]).json
    assert page["missing"][0]["uuid"] == old_rows[1]["uuid"]

    assert server.upload(made, image.dwarf).status in (200, 201)
    moved = [i for (img, _), i in zip(plan, ids) if img is image]
    assert wait_for(lambda: not pending(server, made, moved)), "not moved after the upload"
    for rid in moved:
        assert frames_of(report(server, made, rid)["threads"][0]["frames"]) == \
            expected_frames(image, [image.plain[0]])
    assert [(m["uuid"], m["reports"]) for m in missing(server, made)] == [(other.uuid, 1)]
    assert pending(server, made, [ids[2]]) == [ids[2]]


def test_an_arrival_committed_late_is_not_missed(cluster, make_server, manifest):
    """An arrival whose transaction took its id first and committed last
    (an upload, or an ingest batch recording a late arrival, still
    running): another arrival commits and is handled meanwhile. A reader
    of the ids after the last it saw passed over the first for good; a
    claimed queue finds it when it commits."""
    db = cluster.create_db("it_arrivals_late")
    migrate(db)
    server = make_server(env={"STALLSCOPE_REPROCESS_INTERVAL": "1"}, db_url=db)
    image, other = images(manifest)
    app, late_rid, stack = waiting_report(server, db, image)
    early_rid = post(server, app, "/api/v1/ingest",
                     native(fresh_id(), other, [other.plain[0]])).json["accepted"][0]["id"]
    aid = app_id_of(db, app)
    held = subprocess.Popen([PSQL, db, "-v", "ON_ERROR_STOP=1", "-Aqt"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        held.stdin.write(f"BEGIN;\n{peer_file_sql(server, db, app, image)};\n"
                         "INSERT INTO debug_file_arrivals (app_id, uuid)"
                         f" VALUES ({aid}, '{image.uuid}') RETURNING id;\n")
        held.stdin.flush()
        held_id = int(held.stdout.readline())
        assert server.upload(app, other.dwarf).status in (200, 201)
        # The upload's arrival took a higher id, and committed first.
        assert int(psql(db, "SELECT last_value FROM debug_file_arrivals_id_seq",
                        fold_first=False)) > held_id
        assert wait_for(lambda: not report(server, app, early_rid)["pending"]), \
            "the later arrival was not handled"
        assert report(server, app, late_rid)["pending"]
    finally:
        _, err = held.communicate("COMMIT;\n", timeout=60)
        assert held.returncode == 0, err
    assert wait_for(lambda: not report(server, app, late_rid)["pending"], 15), \
        "the arrival committed late was missed"
    assert frames_of(report(server, app, late_rid)["threads"][0]["frames"]) == \
        expected_frames(image, stack)
    assert psql(db, "SELECT count(*) FROM debug_file_arrivals", fold_first=False) == "0"
    assert_storage_consistent(db)


def two_image_report(lib, app_image, lib_addr, app_addr, user):
    """A stall whose innermost frame is in LIB and the next in APP_IMAGE
    (loaded 256 MiB above): it waits for both."""
    second = 0x110000000
    r = native(fresh_id(), lib, [lib_addr], user=user)
    r["images"].append({"name": app_image.name, "uuid": app_image.uuid,
                        "arch": app_image.arch, "load_address": hex(second),
                        "size": app_image.base + 0x100000})
    r["threads"][0]["frames"].append(hex(second + app_addr - app_image.base + 1))
    return r


def test_two_servers_reprocessing_at_once_leave_nothing_pending(cluster, make_server, tmp_root,
                                                               manifest):
    """Twenty times: reports waiting for two images, whose files are
    uploaded at the same moment through two servers, so each server's
    reprocessing moves the same reports as the other's: every report ends
    symbolized by both files, none pending, none counted twice."""
    db = cluster.create_db("it_arrivals_twenty")
    migrate(db)
    env = {"STALLSCOPE_REPROCESS_INTERVAL": "1",
           "STALLSCOPE_DATA_DIR": str(tmp_root / "arrivals-twenty-data")}
    a, b = make_server(env=env, db_url=db), make_server(env=env, db_url=db)
    lib = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
    app_image = Image(fixture_of(manifest, "dwarf", role="app", variant="app-arm64-O2"))
    for round_ in range(20):
        app = create_app(db)
        allow_everyone(a, app)
        ids = []
        for i in range(6):
            body = two_image_report(lib, app_image, lib.by_function[i % 3],
                                    app_image.by_function[i % 2], f"u{i}")
            r = post(a if i % 2 else b, app, "/api/v1/ingest", body)
            assert r.status == 202, r
            ids.append(r.json["accepted"][0]["id"])
        assert len(pending(a, app, ids)) == 6
        replies = []
        uploads = [threading.Thread(target=lambda s, f: replies.append(s.upload(app, f).status),
                                    args=(s, f)) for s, f in ((a, lib.dwarf), (b, app_image.dwarf))]
        for t in uploads:
            t.start()
        for t in uploads:
            t.join()
        assert sorted(replies) == [201, 201], replies
        assert wait_for(lambda: not pending(a, app, ids), 20), f"round {round_}: left pending"
        for rid in ids:
            frames = report(b, app, rid)["threads"][0]["frames"]
            assert all(f["frames"] for f in frames), (round_, rid, frames)
        groups = a.request("GET", f"/api/v1/apps/{app['app']}/groups?level=1&limit=500",
                           token=app["admin_token"]).json["groups"]
        assert sum(g["reports"] for g in groups) == 6
        assert missing(a, app) == []
    assert_storage_consistent(db)
