"""Crash safety (issue 3, third acceptance point): SIGKILL in the middle of
a large upload leaves no debug file, listed or on disk, beyond a temp file
that the next start removes; the same upload then succeeds."""
import time
import zipfile

from conftest import create_app, dwarfdump_uuids, fixture_of, fixture_path

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
