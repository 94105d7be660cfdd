"""Issue 4 / SPEC §4.1 and §9: hostile or unusual report bodies — encodings,
bombs, limits, malformed JSON — get clear 4xx errors, store nothing, and
leave the server up."""

import gzip
import json
import zlib

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, allow_everyone, fresh_id, native, post


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
