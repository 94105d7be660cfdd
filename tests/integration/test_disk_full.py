"""The data dir's disk filling during a dSYM upload (issue 43, item 6): the
upload answers 507 `insufficient_storage`, its temp files are gone, nothing
is stored, and everything else keeps working — ingest, dashboard reads, and
an upload once there is room again.

The disk is a small tmpfs mounted as the server's STALLSCOPE_DATA_DIR in a
user and mount namespace of the server's own (`unshare`): no root needed,
and nothing stays mounted on the host if the test dies. The test sees the
mount through /proc/<server pid>/root."""
import os
import secrets
import time
import urllib.parse
import zipfile
from pathlib import Path

import pytest

from conftest import assert_storage_consistent, create_app, fixture_of, fixture_path
from ingest_util import Image, allow_everyone, native, post, report

TMPFS_BYTES = 1 << 20
# Mounts the tmpfs where the server will look, then becomes the server.
MOUNT = ('mount -t tmpfs -o size=%d,mode=700 stallscope-full "$STALLSCOPE_DATA_DIR"'
         ' && exec "$0" "$@"' % TMPFS_BYTES)


@pytest.fixture
def full_server(make_server):
    """A server whose data dir is a 1 MiB tmpfs; its data_dir attribute is
    the test's view of that tmpfs once it runs."""
    s = make_server(start=False)
    # The cluster's directory is closed to the namespace's root, an owner
    # from outside it: the password goes in the URL instead of a passfile.
    s.db_url = with_password(s.db_url)
    s.data_dir.mkdir(parents=True)
    s.wrapper = ("unshare", "--user", "--map-root-user", "--mount", "sh", "-c", MOUNT)
    s.start()
    s.data_dir = Path(f"/proc/{s.proc.pid}/root{s.data_dir}")
    assert os.statvfs(s.data_dir).f_blocks * os.statvfs(s.data_dir).f_frsize == TMPFS_BYTES
    return s


def with_password(url):
    """URL (scripts/pg.sh's, with a passfile) with the password itself."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qs(parts.query)
    line = Path(query.pop("passfile")[0]).read_text().strip()
    query["password"] = [line.rsplit(":", 1)[1]]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query, True)))


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def assert_507(r):
    assert (r.status, r.error_code) == (507, "insufficient_storage"), r
    assert r.json["error"]["message"] == "the data directory is full, retry later", r


def no_temp_files(server):
    """Waits for the upload's temp files to go: the server removes them when
    the request ends, just after the reply went out."""
    deadline = time.monotonic() + 30
    while server.temp_files() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.temp_files() == []


def assert_nothing_left(server, app):
    """No temp file of the failed upload and no debug file stored."""
    no_temp_files(server)
    assert server.stored_files() == {}
    assert server.list_dsyms(app) == []


def test_disk_full_during_upload(full_server, manifest, tmp_path):
    server = full_server
    app = create_app(server.db_url)
    allow_everyone(server, app)
    dwarf = fixture_path(fixture_of(manifest, "dwarf"))

    # A zip larger than the whole disk: the body itself does not fit.
    big = tmp_path / "big.zip"
    with zipfile.ZipFile(big, "w", zipfile.ZIP_STORED) as z:
        z.write(dwarf, "libDemo.dylib.dSYM/Contents/Resources/DWARF/libDemo.dylib")
        z.writestr("libDemo.dylib.dSYM/Contents/Resources/padding",
                   secrets.token_bytes(3 * TMPFS_BYTES))
    assert_507(server.upload(app, big))
    assert_nothing_left(server, app)

    # The rest of the server does not notice.
    image = Image(fixture_of(manifest, "dwarf"))
    stack = image.by_function[:3]
    r = post(server, app, "/api/v1/ingest", native(secrets.token_hex(8), image, stack))
    assert r.status == 202, r
    r = post(server, app, "/api/v1/ingest",
             {"reports": [native(secrets.token_hex(8), image, stack, user="u-2")]},
             encoding="gzip")
    assert r.status == 202, r
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups",
                            token=app["admin_token"])
    assert groups.status == 200 and groups.json["groups"], groups
    key = groups.json["groups"][0]["key"]
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{key}",
                       token=app["admin_token"])
    assert r.status == 200, r

    # A disk filled by something else, with room for the body but not for
    # what is built from it (its symcache and kept copy): 507 again.
    filler = server.data_dir / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * (free_bytes(server.data_dir) - dwarf.stat().st_size - 8192))
    assert free_bytes(server.data_dir) < 2 * dwarf.stat().st_size
    assert_507(server.upload(app, dwarf))
    assert_nothing_left(server, app)

    # Room again: the same upload is stored and serves the reports.
    filler.unlink()
    r = server.upload(app, dwarf)
    assert r.status == 201, r
    no_temp_files(server)
    assert {(d["uuid"], d["arch"]) for d in server.list_dsyms(app)} == \
        {(image.uuid, image.arch)}
    r = post(server, app, "/api/v1/ingest", native(secrets.token_hex(8), image, stack))
    assert r.status == 202, r
    frames = report(server, app, r.json["accepted"][0]["id"])["threads"][0]["frames"]
    assert frames and all(f["status"] == "symbolicated" for f in frames), frames
    assert_storage_consistent(server.db_url, app["app"])
