"""Issue 23, item 6: everything under the data dir is 0600 (files) and
0700 (folders), whatever the umask the server and the CLI run under, and
what an older version left readable is tightened at start."""
import os
import shutil
import stat
import time

import pytest

from conftest import (create_app, fixture_of, fixture_path, make_zip,
                      migrate, stallscope)


@pytest.fixture
def umask_zero():
    """The most permissive umask, inherited by every process started."""
    old = os.umask(0)
    yield
    os.umask(old)


def modes_under(root):
    """{relative path: (kind, permission bits)} of everything under ROOT,
    ROOT itself included, links not followed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for path in [dirpath] + [os.path.join(dirpath, n)
                                 for n in dirnames + filenames]:
            st = os.lstat(path)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else \
                "file" if stat.S_ISREG(st.st_mode) else "other"
            out[os.path.relpath(path, root)] = (kind, stat.S_IMODE(st.st_mode))
    return out


def wrong_modes(root):
    want = {"dir": 0o700, "file": 0o600}
    return {p: (k, oct(m)) for p, (k, m) in modes_under(root).items()
            if want.get(k) != m}


@pytest.fixture(scope="module")
def own_db(cluster):
    """A database of its own: the system symbols imported here are the
    whole instance's."""
    db = cluster.create_db("it_security_files")
    migrate(db)
    return db


def test_older_data_dir_is_tightened(own_db, make_server, umask_zero):
    server = make_server(db_url=own_db, start=False)
    root = server.data_dir
    # What an older version left: 0755 folders, a 0644 symcache; and what
    # is not ours (make run's var/ also holds the PostgreSQL cluster).
    old = root / "symcaches" / "999999"
    old.mkdir(parents=True)
    (root / "debug").mkdir()
    (root / "pg").mkdir()
    for d in (root, root / "symcaches", old, root / "debug", root / "pg"):
        d.chmod(0o755)
    for f in (old / "OLD-arm64-0.symcache", root / "pg" / "PG_VERSION"):
        f.write_bytes(b"x")
        f.chmod(0o644)
    server.start()
    for sub in ("tmp", "debug", "symcaches"):
        assert wrong_modes(root / sub) == {}
    assert (old / "OLD-arm64-0.symcache").read_bytes() == b"x"
    # symcaches/, symcaches/999999/, its symcache and debug/.
    assert "restricted 4 entries" in server.log()
    # The operator's folder and what else it holds are theirs.
    assert modes_under(root)["."] == ("dir", 0o755)
    assert modes_under(root / "pg") == {".": ("dir", 0o755),
                                        "PG_VERSION": ("file", 0o644)}


def test_data_dir_is_private(own_db, make_server, manifest, tmp_path,
                             umask_zero):
    db = own_db
    # The server creates the data dir itself.
    server = make_server(db_url=db, start=False)
    assert not server.data_dir.exists()
    server.start()
    assert wrong_modes(server.data_dir) == {}

    app = create_app(db)
    path = f"/api/v1/apps/{app['app']}/dsyms"

    # An upload in flight: its temp file, caught before the body ends.
    fat_entry = fixture_of(manifest, "fat-symtab")
    slices = {(x["uuid"], x["arch"]) for x in fat_entry["slices"]}
    fat = fixture_path(fat_entry).read_bytes()
    conn = server.connection()
    conn.putrequest("POST", path + "?name=libDemo.dylib")
    conn.putheader("Authorization", f"Bearer {app['upload_token']}")
    conn.putheader("Content-Length", str(len(fat)))
    conn.endheaders()
    conn.send(fat[:len(fat) // 2])
    deadline = time.monotonic() + 10
    while not server.temp_files() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.temp_files(), "the upload's temp file never appeared"
    assert wrong_modes(server.data_dir) == {}
    conn.send(fat[len(fat) // 2:])
    resp = conn.getresponse()
    assert resp.status in (200, 201), resp.read()
    resp.read()
    conn.close()

    # A zip of .dSYM bundles (extracted under tmp/) and a raw Mach-O.
    entries = {}
    for i, variant in enumerate(("arm64-O2", "x86_64-O2")):
        entry = fixture_of(manifest, "dwarf", variant=variant)
        slices |= {(x["uuid"], x["arch"]) for x in entry["slices"]}
        dwarf = fixture_path(entry)
        entries[f"{i}/{dwarf.name}.dSYM/Contents/Resources/DWARF/"
                f"{dwarf.name}"] = dwarf.read_bytes()
    zipped = make_zip(tmp_path / "dsyms.zip", entries)
    r = server.upload(app, zipped, name="dsyms.zip")
    assert r.status in (200, 201), r
    entry = fixture_of(manifest, "dwarf", role="app")
    slices |= {(x["uuid"], x["arch"]) for x in entry["slices"]}
    raw = fixture_path(entry)
    r = server.upload(app, raw, name="Demo")
    assert r.status in (200, 201), r

    # The system symbol store, written by the CLI.
    root = tmp_path / "Symbols"
    fw = root / "System/Library/PrivateFrameworks/UIKitCore.framework"
    fw.mkdir(parents=True)
    shutil.copy(fixture_path(fixture_of(manifest, "symtab", role="sys")),
                fw / "UIKitCore")
    stallscope("system-symbols", "import", str(root), db_url=db,
               extra_env={"STALLSCOPE_DATA_DIR": str(server.data_dir)})

    seen = modes_under(server.data_dir)
    files = [p for p, (k, _) in seen.items() if k == "file"]
    # Everything the steps above write is there to be checked.
    assert any(p.startswith("debug/") for p in files)
    assert any(p.startswith("symcaches/system/") and p.endswith(".symcache")
               for p in files)
    app_caches = [p for p in files if p.endswith(".symcache")
                  and not p.startswith("symcaches/system/")]
    # One symcache per slice: a DWARF upload replaces the symbol-table one.
    assert len(app_caches) == len(slices)
    assert wrong_modes(server.data_dir) == {}
    assert "restricted" not in server.log()
