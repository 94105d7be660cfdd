"""Issue 4 / SPEC §4.1 and §9: hostile or unusual report bodies — encodings,
bombs, limits, malformed JSON — get clear 4xx errors, store nothing, and
leave the server up."""

import gzip
import json
import random
import string
import urllib.parse
import zlib

import pytest

from conftest import create_app, fixture_of
from ingest_util import (Image, allow_everyone, fresh_id, ips, kscrash, metrickit, native, post,
                         report)

# The strings a report is counted under (SPEC §4.1 allows 4 KiB per string;
# these are keys of the per-day group counters' index and stop at 256).
DIMENSION_MAX = 256


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


@pytest.fixture(scope="module")
def app(server, db):
    a = create_app(db)
    allow_everyone(server, a)
    return a


def total_reports(server, app):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?limit=500",
                       token=app["admin_token"])
    return sum(g["reports"] for g in r.json["groups"])


def raw_post(server, app, body, headers=None, path="/api/v1/ingest"):
    return server.request("POST", path, body=body, headers=headers or {},
                          key=app["ingest_key"])


def test_gzip_and_deflate_bodies(server, app, image):
    for name, encode in (("gzip", gzip.compress), ("deflate", zlib.compress)):
        body = json.dumps(native(fresh_id(), image, [image.plain[0]])).encode()
        r = raw_post(server, app, encode(body), {"Content-Encoding": name})
        assert r.status == 202, (name, r)


def test_encoding_errors(server, app, image):
    before = total_reports(server, app)
    body = json.dumps(native(fresh_id(), image, [image.plain[0]])).encode()
    bomb = gzip.compress(b" " * (80 << 20))  # 80 MiB of spaces: past the 64 MiB limit
    cases = [
        (bomb, {"Content-Encoding": "gzip"}, 413, "decompressed_too_large"),
        (gzip.compress(body)[:-9], {"Content-Encoding": "gzip"}, 400, "bad_encoding"),
        (body, {"Content-Encoding": "br"}, 415, "unsupported_media_type"),
        (b"", {}, 400, "empty_body"),
        (b"{not json", {}, 400, "bad_json"),
        (b"[" * 100 + b"]" * 100, {}, 400, "bad_json"),
        (json.dumps({"reports": [native(fresh_id(), image, [image.plain[0]])] * 1001}).encode(),
         {}, 400, "too_many"),
        (json.dumps(native(fresh_id(), image, [image.plain[0]] * 2049)).encode(), {}, 400,
         "too_many"),
    ]
    for body_, headers, status, code in cases:
        r = raw_post(server, app, body_, headers)
        assert (r.status, r.error_code) == (status, code), r
    assert total_reports(server, app) == before
    assert server.alive()


def test_addresses_beyond_2_53_are_refused(server, app, image):
    rep = native(fresh_id(), image, [image.plain[0]])
    rep["threads"][0]["frames"] = [2 ** 53 + 1]
    r = raw_post(server, app, json.dumps(rep).encode())
    assert r.status == 400 and "frames[0]" in r.json["error"]["message"], r


def test_body_over_the_limit(make_server, db, image):
    small = make_server(env={"STALLSCOPE_MAX_BODY": "64K"})
    app = create_app(db)
    rep = native(fresh_id(), image, [image.plain[0]], padding="x" * 100_000)
    r = raw_post(small, app, json.dumps(rep).encode())
    assert r.status == 413 and r.error_code == "body_too_large", r
    assert small.alive()


def test_every_format_refuses_garbage(server, app):
    for path in ("/api/v1/ingest", "/api/v1/ingest/metrickit", "/api/v1/ingest/kscrash",
                 "/api/v1/ingest/ips"):
        r = raw_post(server, app, b"\x00\x01garbage", path=path)
        assert r.status == 400, (path, r)
        assert r.json["error"]["code"] in ("bad_json", "bad_field"), (path, r)


def noise(n, rng=random.Random(4)):
    """N bytes no compressor shrinks much: what a hostile client would send
    to push an index entry past PostgreSQL's 2,704 bytes."""
    return "".join(rng.choices(string.ascii_letters + string.digits, k=n))


def test_counted_strings_at_their_cap_are_stored_in_every_format(server, app, image):
    stack = [image.plain[0]]
    v, d, u = noise(DIMENSION_MAX), noise(DIMENSION_MAX), noise(DIMENSION_MAX)
    osv = "iOS " + "".join(random.Random(5).choices(string.digits, k=DIMENSION_MAX - 4))
    mk = metrickit(image, stack)
    mk["hangDiagnostics"][0]["diagnosticMetaData"].update(
        appVersion=v, deviceType=d, osVersion=osv)
    ks = kscrash(fresh_id(), image, stack, user=u)
    ks["system"].update(CFBundleShortVersionString=v, system_version=osv[4:], machine=d)
    header, body = ips(fresh_id(), image, stack).split(b"\n", 1)
    header, body = json.loads(header), json.loads(body)
    header.update(app_version=v, os_version=osv)
    body["modelCode"] = d
    cases = [
        ("/api/v1/ingest", native(fresh_id(), image, stack, user=u, app_version=v,
                                  os_version=osv[4:], device=d), None),
        ("/api/v1/ingest/metrickit", mk, u),
        ("/api/v1/ingest/kscrash", ks, None),
        ("/api/v1/ingest/ips", (json.dumps(header) + "\n" + json.dumps(body)).encode(), u),
    ]
    for path, payload, user in cases:
        r = post(server, app, path, payload, user=user)
        assert r.status == 202, (path, r)
        (acc,) = r.json["accepted"]
        rep = report(server, app, acc["id"])
        assert (rep["user_id"], rep["app_version"], rep["os_version"], rep["device"]) == \
            (u, v, osv[4:], d), path
    assert server.alive()


def test_counted_strings_over_their_cap_are_refused_by_name(server, app, image):
    stack = [image.plain[0]]
    long = noise(DIMENSION_MAX + 1)
    before = total_reports(server, app)

    def refused(path, payload, field, user=None):
        # A body that is one report fails whole; a MetricKit payload is a
        # batch of diagnostics, each rejected on its own (SPEC §4.1).
        r = post(server, app, path, payload, user=user)
        if r.status == 202:
            assert r.json["accepted"] == [], (path, field, r)
            (rejected,) = r.json["rejected"]
            error = rejected["error"]
        else:
            assert r.status == 400, (path, field, r)
            error = r.json["error"]
        assert error["code"] == "bad_field", (path, field, r)
        assert f"{field}: longer than {DIMENSION_MAX} bytes" in error["message"], r

    for field in ("user_id", "app_version", "os_version", "device"):
        refused("/api/v1/ingest", native(fresh_id(), image, stack, **{field: long}), field)
    refused("/api/v1/ingest", native(fresh_id(), image, stack), "X-Stallscope-User",
            user=long)
    for key in ("appVersion", "deviceType", "osVersion"):
        mk = metrickit(image, stack)
        mk["hangDiagnostics"][0]["diagnosticMetaData"][key] = long
        refused("/api/v1/ingest/metrickit", mk, "diagnosticMetaData." + key)
    for key in ("CFBundleShortVersionString", "system_version", "machine"):
        ks = kscrash(fresh_id(), image, stack)
        ks["system"][key] = long
        refused("/api/v1/ingest/kscrash", ks, "system." + key)
    refused("/api/v1/ingest/kscrash", kscrash(fresh_id(), image, stack, user=long),
            "user.user_id")
    for part, key in (("header", "app_version"), ("header", "os_version"),
                      ("body", "modelCode")):
        header, body = (json.loads(x) for x in ips(fresh_id(), image, stack).split(b"\n", 1))
        {"header": header, "body": body}[part][key] = long
        refused("/api/v1/ingest/ips", (json.dumps(header) + "\n" + json.dumps(body)).encode(),
                f"{part}.{key}")
    assert total_reports(server, app) == before
    assert server.alive()


def test_user_id_routes_take_the_same_cap(server, app):
    ok, long = noise(DIMENSION_MAX), noise(DIMENSION_MAX + 1)
    for user, status in ((ok, 200), (long, 400)):
        put = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/{user}",
                             body=b"{}", token=app["admin_token"])
        assert put.status == status, put
        got = server.request("GET", "/api/v1/sampling?user_id=" + urllib.parse.quote(user),
                             key=app["ingest_key"])
        assert got.status == status, got
    listed = server.request("GET", f"/api/v1/apps/{app['app']}/whitelist",
                            token=app["admin_token"])
    assert [e["user_id"] for e in listed.json["whitelist"]] == [ok]


def test_bytes_outside_json_must_be_utf8(server, app, image):
    """Headers and URLs are raw bytes (JSON bodies are checked by the
    parser): not UTF-8, they are refused with a 400, never a database
    error, and nothing is stored."""
    before = total_reports(server, app)
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, [image.plain[0]]),
             user=b"caf\xe9")
    assert (r.status, r.error_code) == (400, "bad_field"), r
    assert "X-Stallscope-User: not valid UTF-8" in r.json["error"]["message"], r
    admin = {"token": app["admin_token"]}
    for method, path, auth in (
            ("GET", "/api/v1/sampling?user_id=caf%E9", {"key": app["ingest_key"]}),
            ("PUT", f"/api/v1/apps/{app['app']}/whitelist/caf%E9", admin),
            ("GET", f"/api/v1/apps/{app['app']}/groups?app_version=%ED%A0%80", admin),
            ("GET", f"/api/v1/apps/{app['app']}/groups?device=%F4%90%80%80", admin)):
        r = server.request(method, path, body=b"{}" if method == "PUT" else None, **auth)
        assert (r.status, r.error_code) == (400, "bad_query"), (path, r)
        assert "not valid UTF-8" in r.json["error"]["message"], r
    # The same routes with UTF-8 (é) work.
    assert post(server, app, "/api/v1/ingest", native(fresh_id(), image, [image.plain[0]]),
                user="caf\u00e9".encode()).status == 202
    r = server.request("GET", "/api/v1/sampling?user_id=caf%C3%A9", key=app["ingest_key"])
    assert r.status == 200, r
    assert total_reports(server, app) == before + 1
    assert server.alive()
