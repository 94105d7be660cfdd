"""Crash safety. Issue 3, third acceptance point: SIGKILL in the middle of
a large upload leaves no debug file, listed or on disk, beyond a temp file
that the next start removes; the same upload then succeeds. And a report
answered 2xx survives PostgreSQL crashing right after."""
import os
import signal
import subprocess
import time
import zipfile

from conftest import (PSQL, Cluster, assert_storage_consistent, create_app, dwarfdump_uuids,
                      fixture_of, fixture_path, migrate, psql)
from ingest_util import Image, allow_everyone, fresh_id, native, post

PADDING = 24 << 20


def big_upload(manifest, path):
    """A valid zip: one dSYM bundle and a large stored (uncompressed)
    top-level file that the server skips as not Mach-O."""
    dwarf = fixture_path(fixture_of(manifest, "dwarf"))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.write(dwarf, "libDemo.dylib.dSYM/Contents/Resources/DWARF/"
                       "libDemo.dylib")
        z.writestr("padding.bin", b"\0" * PADDING)
    return path, dwarfdump_uuids(dwarf)


def test_sigkill_mid_upload_then_restart(make_server, db, manifest, tmp_path):
    server = make_server()
    app = create_app(db)
    body, expected = big_upload(manifest, tmp_path / "big.zip")
    size = body.stat().st_size

    conn = server.connection()
    conn.putrequest("POST", f"/api/v1/apps/{app['app']}/dsyms")
    conn.putheader("Authorization", f"Bearer {app['upload_token']}")
    conn.putheader("Content-Length", str(size))
    conn.endheaders()
    with open(body, "rb") as f:
        for _ in range(size // 2 // (256 << 10)):
            conn.send(f.read(256 << 10))
            time.sleep(0.005)
    # Only kill once the server is provably mid-way through the body.
    temp = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        temps = list((server.data_dir / "tmp").glob("upload-*"))
        if temps and temps[0].stat().st_size > 4 << 20:
            temp = temps[0]
            break
        time.sleep(0.02)
    assert temp, "the upload never reached the server's temp file"
    server.kill()
    conn.close()

    assert server.stored_files() == {}
    left = server.temp_files()
    assert left and all(n.startswith("upload-") for n in left), left

    server.start()
    assert server.temp_files() == []
    assert "removed stale" in server.log()
    assert server.list_dsyms(app) == []

    r = server.upload(app, body)
    assert r.status == 201, r
    assert {(f["uuid"], f["arch"]) for f in r.json["files"]} == expected
    assert len(server.stored_files()) == 2 * len(expected)
    assert_storage_consistent(db, app["app"])


def test_start_removes_stale_temp_files_only(make_server, db, manifest):
    server = make_server()
    app = create_app(db)
    assert server.upload(app, fixture_path(fixture_of(manifest, "dwarf"))) \
        .status == 201
    kept = server.stored_files()
    assert server.stop() == 0

    # What a crash while writing could leave: our copy's temp file, the
    # symcache writer's, a half-received body and its extraction dir.
    d = server.data_dir
    planted = [d / "debug/1/X-arm64-0/.tmp-abc123",
               d / "symcaches/1/X-arm64-0.symcache.tmp.4242",
               d / "tmp/upload-AbC123",
               d / "tmp/upload-AbC123.d/0"]
    for p in planted:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"partial")
    server.start()
    for p in planted:
        assert not p.exists(), p
    assert server.stored_files() == kept
    assert len(server.list_dsyms(app)) == 1


def stop_between_flushes(admin, walwriter):
    """Stops the WAL writer while it waits in its main loop: stopped in
    the middle of a flush (the server's folder writes a little WAL every
    second), it would hold the WAL write lock and every commit would wait
    for it."""
    for _ in range(200):
        os.kill(walwriter, signal.SIGSTOP)
        if psql(admin, "SELECT wait_event FROM pg_stat_activity"
                       f" WHERE pid = {walwriter}") == "WalWriterMain":
            return
        os.kill(walwriter, signal.SIGCONT)
        time.sleep(0.05)
    raise AssertionError("the WAL writer never waited in its main loop")


def test_an_acknowledged_report_survives_a_database_crash(make_server, manifest, tmp_root):
    """A 2xx means committed and on disk: with PostgreSQL's WAL writer
    stopped, an asynchronous commit (synchronous_commit off, ours or the
    database's) would leave the report's commit record in shared memory.
    The database crashes right after the 202, and the report is there."""
    cluster = Cluster(tmp_root / "pg-crashed")
    cluster.start(durable=True)
    try:
        url = cluster.create_db("durable")
        migrate(url)
        # Nothing else of ours writes WAL meanwhile.
        admin = cluster.superuser_url("durable")
        psql(admin, "ALTER SYSTEM SET autovacuum = off")
        psql(admin, "SELECT pg_reload_conf()")
        server = make_server(db_url=url)
        app = create_app(url)
        allow_everyone(server, app)
        image = Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))
        walwriter = int(psql(admin, "SELECT pid FROM pg_stat_activity"
                                    " WHERE backend_type = 'walwriter'"))
        stop_between_flushes(admin, walwriter)
        rid = fresh_id()
        try:
            r = post(server, app, "/api/v1/ingest",
                     native(rid, image, [image.by_function[1], image.by_function[2]]))
            assert r.status == 202, r
        finally:
            # A child killed: the postmaster ends every backend, drops
            # shared memory with its WAL buffers, and recovers from disk.
            os.kill(walwriter, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while subprocess.run([PSQL, url, "-c", "SELECT 1"],
                             capture_output=True).returncode != 0:
            assert time.monotonic() < deadline, "PostgreSQL did not recover"
            time.sleep(0.2)
        assert psql(url, f"SELECT count(*) FROM reports WHERE report_id = '{rid}'") == "1"
        assert psql(url, "SELECT sum(reports) FROM groups WHERE level = 1") == "1"
        assert_storage_consistent(url)
    finally:
        cluster.stop()
