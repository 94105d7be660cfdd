"""Hostile and wrong requests (issue 3, second acceptance point): each gets a
4xx JSON error, the server stays up, and every stored file is untouched."""
import http.client
import os
import secrets
import socket
import stat
import time
import zipfile

import pytest

from conftest import (Reply, _new_server, create_app, fixture_of,
                      fixture_path, make_zip)

MAX_UPLOAD = 1 << 20
MAX_UNZIPPED = 2 << 20


@pytest.fixture(scope="module")
def guarded(db, manifest, tmp_root):
    """A server with small limits, one app holding one debug file."""
    server = _new_server(db, tmp_root, {
        "STALLSCOPE_MAX_UPLOAD": str(MAX_UPLOAD),
        "STALLSCOPE_MAX_UNZIPPED": str(MAX_UNZIPPED),
        "STALLSCOPE_MAX_URL": "512",
    }, name="guarded").start()
    app = create_app(db)
    r = server.upload(app, fixture_path(fixture_of(manifest, "dwarf")))
    assert r.status == 201, r
    yield server, app
    assert server.stop() == 0, server.log()[-3000:]


@pytest.fixture
def intact(guarded):
    """Checks after the test that the server is up, the stored files are
    byte-for-byte the same, nothing is listed twice and no temp file is
    left behind."""
    server, app = guarded
    files = server.stored_files()
    listed = server.list_dsyms(app)
    yield server, app
    assert server.alive(), server.log()[-3000:]
    assert server.request("GET", "/healthz").status == 200
    assert server.stored_files() == files
    assert server.list_dsyms(app) == listed
    # The temp file goes when the request completes, just after the reply.
    deadline = time.monotonic() + 5
    while server.temp_files() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.temp_files() == []


def expect_error(reply, status, code):
    assert reply.status == status, reply
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.json["error"]["code"] == code, reply
    assert reply.json["error"]["message"]


def dwarf_bytes(manifest):
    return fixture_path(fixture_of(manifest, "dwarf")).read_bytes()


def test_not_macho(intact):
    server, app = intact
    r = server.upload(app, b"this is a text file, not a Mach-O\n" * 20)
    expect_error(r, 400, "bad_debug_file")


@pytest.mark.parametrize("keep", [16, 64, 1000, "half"])
def test_truncated_macho(intact, manifest, keep):
    server, app = intact
    data = dwarf_bytes(manifest)
    n = len(data) // 2 if keep == "half" else keep
    r = server.upload(app, data[:n])
    expect_error(r, 400, "bad_debug_file")


def test_corrupted_load_commands(intact, manifest):
    server, app = intact
    data = bytearray(dwarf_bytes(manifest))
    data[20:24] = (0x7fffffff).to_bytes(4, "little")  # sizeofcmds
    r = server.upload(app, bytes(data))
    expect_error(r, 400, "bad_debug_file")


@pytest.mark.parametrize("name", [
    "../evil.dSYM/Contents/Resources/DWARF/evil",
    "ok/../../evil.dSYM/Contents/Resources/DWARF/evil",
    "/tmp/evil.dSYM/Contents/Resources/DWARF/evil",
    "..\\evil.dSYM\\Contents\\Resources\\DWARF\\evil",
    "C:/evil.dSYM/Contents/Resources/DWARF/evil",
])
def test_zip_path_traversal(intact, manifest, tmp_path, name):
    server, app = intact
    z = make_zip(tmp_path / "evil.zip", {
        "good.dSYM/Contents/Resources/DWARF/good": dwarf_bytes(manifest),
        name: dwarf_bytes(manifest)})
    r = server.upload(app, z)
    expect_error(r, 400, "bad_archive")
    assert "unsafe path" in r.json["error"]["message"]
    assert not (server.data_dir.parent / "evil.dSYM").exists()
    assert not os.path.exists("/tmp/evil.dSYM")


def test_zip_symlink_entry(intact, tmp_path):
    server, app = intact
    path = tmp_path / "link.zip"
    with zipfile.ZipFile(path, "w") as z:
        info = zipfile.ZipInfo("x.dSYM/Contents/Resources/DWARF/x")
        info.create_system = 3  # Unix: the mode below is honoured
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    expect_error(server.upload(app, path), 400, "bad_archive")


def test_zip_bomb(intact, tmp_path):
    server, app = intact
    path = make_zip(tmp_path / "bomb.zip", {
        "bomb.dSYM/Contents/Resources/DWARF/bomb":
            b"\0" * (MAX_UNZIPPED + 4096)})
    assert path.stat().st_size < MAX_UPLOAD
    expect_error(server.upload(app, path), 413, "decompressed_too_large")


def test_zip_bomb_across_entries(intact, tmp_path):
    server, app = intact
    entries = {f"b{i}.dSYM/Contents/Resources/DWARF/b{i}": b"\0" * (1 << 20)
               for i in range(4)}
    path = make_zip(tmp_path / "bombs.zip", entries)
    expect_error(server.upload(app, path), 413, "decompressed_too_large")


def test_zip_without_debug_files(intact, tmp_path):
    server, app = intact
    path = make_zip(tmp_path / "readme.zip",
                    {"README.txt": b"hello", "dir/notes.txt": b"x"})
    expect_error(server.upload(app, path), 400, "bad_archive")


def test_garbage_after_zip_magic(intact):
    server, app = intact
    expect_error(server.upload(app, b"PK\x03\x04" + os.urandom(5000)), 400,
                 "bad_archive")


def test_empty_body(intact):
    server, app = intact
    expect_error(server.upload(app, b""), 400, "empty_body")


def test_body_over_the_limit_is_refused_before_it_is_sent(intact):
    """With Content-Length (and Expect: 100-continue, as curl sends) the
    413 comes before any body byte."""
    server, app = intact
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    s.sendall((f"POST /api/v1/apps/{app['app']}/dsyms HTTP/1.1\r\n"
               f"Host: test\r\nAuthorization: Bearer {app['upload_token']}\r\n"
               f"Content-Length: {MAX_UPLOAD + 1}\r\n"
               "Expect: 100-continue\r\n\r\n").encode())
    resp = http.client.HTTPResponse(s)
    resp.begin()  # would hang on a 100 Continue: no body follows
    r = Reply(resp.status, dict(resp.getheaders()), resp.read())
    s.close()
    expect_error(r, 413, "body_too_large")


def test_refused_before_the_body_with_expect(intact):
    """Bad credentials on a large upload are answered at once when the
    client waits for 100 Continue."""
    server, app = intact
    s = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    s.sendall((f"POST /api/v1/apps/{app['app']}/dsyms HTTP/1.1\r\n"
               f"Host: test\r\nAuthorization: Bearer ssu_{'B' * 43}\r\n"
               f"Content-Length: {MAX_UPLOAD}\r\n"
               "Expect: 100-continue\r\n\r\n").encode())
    resp = http.client.HTTPResponse(s)
    resp.begin()
    r = Reply(resp.status, dict(resp.getheaders()), resp.read())
    s.close()
    expect_error(r, 401, "unauthorized")


def test_small_bodies_are_read_before_a_refusal(intact, manifest):
    """A client that writes its whole body before reading still gets the
    answer (not a reset connection)."""
    server, app = intact
    body = dwarf_bytes(manifest) * 4
    for _ in range(5):
        expect_error(server.request("POST", "/api/v1/apps/x/nothing",
                                    body=body), 404, "no_route")
        expect_error(server.request("PUT", f"/api/v1/apps/{app['app']}/dsyms",
                                    body=body), 405, "method_not_allowed")
        expect_error(server.request("POST",
                                    f"/api/v1/apps/{app['app']}/dsyms",
                                    body=body, token="ssu_" + "C" * 43),
                     401, "unauthorized")


def test_chunked_body_over_the_limit(intact):
    server, app = intact
    conn = server.connection()
    chunks = (b"\0" * 65536 for _ in range(MAX_UPLOAD // 65536 + 2))
    conn.request("POST", f"/api/v1/apps/{app['app']}/dsyms", body=chunks,
                 headers={"Authorization": f"Bearer {app['upload_token']}",
                          "Transfer-Encoding": "chunked"},
                 encode_chunked=True)
    resp = conn.getresponse()
    r = Reply(resp.status, dict(resp.getheaders()), resp.read())
    conn.close()
    expect_error(r, 413, "body_too_large")


@pytest.mark.parametrize("how", ["missing", "not bearer", "malformed",
                                 "unknown upload token", "unknown admin"])
def test_bad_credentials(intact, manifest, how):
    server, app = intact
    headers = {
        "missing": {},
        "not bearer": {"Authorization": f"Basic {app['upload_token']}"},
        "malformed": {"Authorization": "Bearer nonsense"},
        "unknown upload token": {
            "Authorization": "Bearer ssu_" + secrets.token_urlsafe(32)},
        "unknown admin": {
            "Authorization": "Bearer ssa_" + secrets.token_urlsafe(32)},
    }[how]
    r = server.request("POST", f"/api/v1/apps/{app['app']}/dsyms",
                       body=dwarf_bytes(manifest), headers=headers)
    expect_error(r, 401, "unauthorized")
    r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms",
                       headers=headers)
    expect_error(r, 401, "unauthorized")


def test_other_apps_token(intact, db, manifest):
    server, app = intact
    other = create_app(db)
    for token in (other["upload_token"], other["admin_token"]):
        r = server.request("POST", f"/api/v1/apps/{app['app']}/dsyms",
                           body=dwarf_bytes(manifest), token=token)
        expect_error(r, 403, "forbidden")
        r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms",
                           token=token)
        expect_error(r, 403, "forbidden")


def test_wrong_kind_of_credential(intact, manifest):
    server, app = intact
    # Uploading takes the upload token only.
    for token in (app["admin_token"], app["ingest_key"]):
        r = server.request("POST", f"/api/v1/apps/{app['app']}/dsyms",
                           body=dwarf_bytes(manifest), token=token)
        expect_error(r, 403, "forbidden")
    # The ingest key is for devices: never for the dSYM API.
    r = server.request("GET", f"/api/v1/apps/{app['app']}/dsyms",
                       key=app["ingest_key"])
    expect_error(r, 401, "unauthorized")


def test_unknown_app(intact, manifest):
    server, app = intact
    r = server.request("POST", "/api/v1/apps/com.no.such.app/dsyms",
                       body=dwarf_bytes(manifest), token=app["upload_token"])
    # Another app's credentials, as for an app that exists (issue 23).
    expect_error(r, 403, "forbidden")
    # Names no app can have are unknown apps too.
    for name in ("caf%C3%A9", "x" * 300, "-leading-dash"):
        r = server.request("GET", f"/api/v1/apps/{name}/dsyms",
                           token=app["admin_token"])
        expect_error(r, 403, "forbidden")
    # A path that is not even UTF-8 is a malformed request, on any route.
    r = server.request("GET", "/api/v1/apps/%FF%FE/dsyms", token=app["admin_token"])
    expect_error(r, 400, "bad_query")
    # Nor is a path segment that decodes to a NUL byte.
    r = server.request("GET", "/api/v1/apps/a%00b/dsyms",
                       token=app["admin_token"])
    expect_error(r, 400, "bad_query")
    # Without valid credentials nothing tells whether the app exists.
    r = server.request("GET", "/api/v1/apps/com.no.such.app/dsyms")
    expect_error(r, 401, "unauthorized")


def test_routing_errors(intact):
    server, app = intact
    expect_error(server.request("GET", "/nope"), 404, "no_route")
    expect_error(server.request("GET", "/api/v1/apps/x/dsyms/y/z"), 404,
                 "no_route")
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/dsyms",
                       token=app["upload_token"])
    expect_error(r, 405, "method_not_allowed")
    assert set(r.headers["Allow"].split(", ")) == {"GET", "POST"}
    expect_error(server.request("GET", "/healthz?" + "x" * 600), 414,
                 "uri_too_long")


def test_delete_unknown_and_malformed_uuid(intact):
    server, app = intact
    r = server.request("DELETE", f"/api/v1/apps/{app['app']}/dsyms/"
                                 "00000000-0000-0000-0000-000000000000",
                       token=app["upload_token"])
    expect_error(r, 404, "not_found")
    r = server.request("DELETE", f"/api/v1/apps/{app['app']}/dsyms/1234",
                       token=app["upload_token"])
    expect_error(r, 400, "bad_request")
