"""Issue 4, SPEC §5: who may upload. Sampling over 100,000 users through
GET /api/v1/sampling, the same answer all day and a different set the next
day (servers whose clock is set with STALLSCOPE_FAKE_NOW), the whitelist,
the daily quota under concurrent uploads, and the config API."""

import concurrent.futures
import json
import urllib.parse

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, fresh_id, native, post

DAY = 86400
# 2026-11-20T12:00:00Z and the next day: the tests own their dates.
NOON = 1795176000
USERS = 100_000


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def sampling(server, app, user):
    r = server.request("GET", f"/api/v1/sampling?user_id={user}", key=app["ingest_key"])
    assert r.status == 200, r
    return r.json


def sampled_set(server, app, users, workers=8):
    """Every user's answer, over kept-alive connections (one per worker)."""
    def ask(chunk):
        conn = server.connection()
        out = []
        try:
            for u in chunk:
                conn.request("GET", f"/api/v1/sampling?user_id={u}",
                             headers={"X-Stallscope-Key": app["ingest_key"]})
                resp = conn.getresponse()
                body = resp.read()
                assert resp.status == 200, body
                out.append(json.loads(body))
        finally:
            conn.close()
        return out
    chunks = [users[i::workers] for i in range(workers)]
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        parts = list(pool.map(ask, chunks))
    answers = {}
    for chunk, part in zip(chunks, parts):
        answers.update(zip(chunk, part))
    ordered = [answers[u] for u in users]
    return {u for u, a in zip(users, ordered) if a["upload"]}, ordered


def test_sampling_share_and_daily_rotation(db, make_server):
    app = create_app(db)
    users = [f"user-{i}" for i in range(USERS)]
    today = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    chosen, answers = sampled_set(today, app, users)
    share = len(chosen) / USERS
    assert 0.045 <= share <= 0.055, share
    assert {a["day"] for a in answers} == {"2026-11-20"}
    assert all(a["sample_rate"] == 0.05 for a in answers)
    assert all(a["reason"] == ("sampled" if a["upload"] else "not_sampled") for a in answers)
    assert all(a["quota_remaining"] == (20 if a["upload"] else 0) for a in answers)
    # Later the same day, on another server: the same users.
    evening = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON + 6 * 3600)})
    probe = users[:5000]
    assert sampled_set(evening, app, probe)[0] == chosen & set(probe)
    # The next day: a different 5%, overlapping only by chance.
    tomorrow = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON + DAY)})
    next_set, _ = sampled_set(tomorrow, app, users)
    assert 0.045 <= len(next_set) / USERS <= 0.055
    overlap = len(chosen & next_set) / len(chosen)
    assert overlap < 0.15, overlap


def test_whitelisted_users_always_upload(server, db, image):
    app = create_app(db)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=json.dumps({"sample_rate": 0}).encode(), token=app["admin_token"])
    assert r.status == 200 and r.json["sample_rate"] == 0, r
    assert sampling(server, app, "vip")["reason"] == "not_sampled"
    refused = post(server, app, "/api/v1/ingest", native(fresh_id(), image, [image.plain[0]],
                                                         user="vip"))
    assert refused.status == 403 and refused.error_code == "not_sampled", refused
    put = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/vip",
                         body=json.dumps({"note": "reported a freeze"}).encode(),
                         token=app["admin_token"])
    assert put.status == 200, put
    s = sampling(server, app, "vip")
    assert s["upload"] and s["reason"] == "whitelisted" and s["quota_remaining"] is None
    for _ in range(25):  # no quota for them either
        r = post(server, app, "/api/v1/ingest",
                 native(fresh_id(), image, [image.plain[0]], user="vip"))
        assert r.status == 202, r
    # An expired entry no longer counts.
    server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/old",
                   body=json.dumps({"expires_at": "2001-01-01T00:00:00Z"}).encode(),
                   token=app["admin_token"])
    assert sampling(server, app, "old")["reason"] == "not_sampled"
    listed = server.request("GET", f"/api/v1/apps/{app['app']}/whitelist?limit=1",
                            token=app["admin_token"])
    assert listed.status == 200 and len(listed.json["whitelist"]) == 1
    assert listed.json["next_cursor"] == "old"
    rest = server.request("GET", f"/api/v1/apps/{app['app']}/whitelist?cursor=old",
                          token=app["admin_token"])
    assert [e["user_id"] for e in rest.json["whitelist"]] == ["vip"]
    assert rest.json["whitelist"][0]["note"] == "reported a freeze"
    gone = server.request("DELETE", f"/api/v1/apps/{app['app']}/whitelist/vip",
                          token=app["admin_token"])
    assert gone.status == 204
    again = server.request("DELETE", f"/api/v1/apps/{app['app']}/whitelist/vip",
                           token=app["admin_token"])
    assert again.status == 404
    bad = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/x",
                         body=b'{"expires_at":"tomorrow"}', token=app["admin_token"])
    assert bad.status == 400 and "expires_at" in bad.json["error"]["message"]


def test_whitelist_takes_any_user_id_percent_encoded(server, db):
    """User ids are free text: '/' and '%' must reach the whitelist as
    themselves, not split the path or decode twice."""
    app = create_app(db)
    token = app["admin_token"]
    base = f"/api/v1/apps/{app['app']}/whitelist"
    users = ["team/alice", "50%off", "a?b c", "Zoë#1"]
    for user in users:
        r = server.request("PUT", f"{base}/{urllib.parse.quote(user, safe='')}",
                           body=b"{}", token=token)
        assert r.status == 200 and r.json["user_id"] == user, (user, r)
        s = sampling(server, app, urllib.parse.quote(user, safe=""))
        assert s["reason"] == "whitelisted", (user, s)
    listed = server.request("GET", base, token=token).json["whitelist"]
    assert sorted(e["user_id"] for e in listed) == sorted(users)
    for user in users:
        r = server.request("DELETE", f"{base}/{urllib.parse.quote(user, safe='')}",
                           token=token)
        assert r.status == 204, (user, r)
    assert server.request("GET", base, token=token).json["whitelist"] == []
    # Clients drop "." and ".." path segments, so such an entry could never
    # be removed: refused. A NUL byte cannot be a user id; the literal
    # parts of a path are not decoded.
    for dots in [".", "..", "%2E%2E"]:
        r = server.request("PUT", f"{base}/{dots}", body=b"{}", token=token)
        assert r.status == 400 and r.error_code == "bad_field", (dots, r)
    r = server.request("PUT", f"{base}/a%00b", body=b"{}", token=token)
    assert r.status == 400 and r.error_code == "bad_query", r
    assert server.request("GET", f"/api/v1/apps/{app['app']}/%77hitelist",
                          token=token).status == 404


def test_quota_holds_under_concurrent_uploads(server, db, image):
    app = create_app(db)
    server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                   body=json.dumps({"sample_rate": 1}).encode(), token=app["admin_token"])
    reports = [native(fresh_id(), image, [image.plain[0]], user="busy") for _ in range(30)]
    with concurrent.futures.ThreadPoolExecutor(30) as pool:
        replies = list(pool.map(lambda r: post(server, app, "/api/v1/ingest", r), reports))
    statuses = sorted(r.status for r in replies)
    assert statuses.count(202) == 20, statuses
    assert statuses.count(429) == 10, statuses
    assert {r.error_code for r in replies if r.status == 429} == {"quota_exhausted"}
    s = sampling(server, app, "busy")
    assert s == {**s, "upload": False, "reason": "quota_exhausted", "quota_remaining": 0}
    # A resend of a stored report is not a new report: no quota needed.
    stored = next(rep for rep, r in zip(reports, replies) if r.status == 202)
    assert post(server, app, "/api/v1/ingest", stored).status == 202
    # Exactly 20 stored: the group count says so.
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups",
                            token=app["admin_token"]).json["groups"]
    assert sum(g["reports"] for g in groups) == 20


def test_config_changes_only_what_is_given(server, db):
    app = create_app(db)
    path = f"/api/v1/apps/{app['app']}/config"
    got = server.request("GET", path, token=app["admin_token"])
    assert got.json == {"sample_rate": 0.05, "daily_quota": 20, "retention_days": 7,
                        "grouping_rules": {"skip_images": [], "skip_prefixes": []}}
    r = server.request("PUT", path, token=app["admin_token"],
                       body=json.dumps({"daily_quota": 5, "grouping_rules": {
                           "skip_images": ["libsystem_kernel.dylib"]}}).encode())
    assert r.status == 200, r
    assert r.json == {"sample_rate": 0.05, "daily_quota": 5, "retention_days": 7,
                      "grouping_rules": {"skip_images": ["libsystem_kernel.dylib"],
                                         "skip_prefixes": []}}
    for body, field in ((b'{"sample_rate":1.5}', "sample_rate"),
                        (b'{"daily_quota":-1}', "daily_quota"),
                        (b'{"retention_days":0}', "retention_days"),
                        (b'{"grouping_rules":{"skip_images":[1]}}', "grouping_rules"),
                        (b'{"colour":"red"}', "colour")):
        bad = server.request("PUT", path, body=body, token=app["admin_token"])
        assert bad.status == 400 and field in bad.json["error"]["message"], bad
    assert server.request("GET", path, token=app["admin_token"]).json == r.json


def test_policy_routes_check_credentials(server, db, image):
    app, other = create_app(db), create_app(db)
    path = f"/api/v1/apps/{app['app']}/config"
    assert server.request("GET", path).status == 401
    assert server.request("GET", path, token=other["admin_token"]).status == 403
    assert server.request("GET", path, token=app["upload_token"]).status == 403
    assert server.request("GET", "/api/v1/sampling?user_id=u").status == 401
    # Devices' routes read only the ingest key: a token there is no key.
    assert server.request("GET", "/api/v1/sampling?user_id=u",
                          token=app["admin_token"]).status == 401
    assert server.request("GET", "/api/v1/sampling", key=app["ingest_key"]).status == 400
    assert post(server, {"ingest_key": "ssi_nonsense"}, "/api/v1/ingest",
                native(fresh_id(), image, [image.plain[0]])).status == 401
    # Reports of one app are invisible to another app's token.
    server.request("PUT", path, body=b'{"sample_rate":1}', token=app["admin_token"])
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, [image.plain[0]]))
    rid = r.json["accepted"][0]["id"]
    assert server.request("GET", f"/api/v1/reports/{rid}",
                          token=other["admin_token"]).status == 404
    assert server.request("GET", f"/api/v1/reports/{rid}",
                          token=app["admin_token"]).status == 200


def test_a_report_without_user_is_refused_naming_it(server, db, image):
    app = create_app(db)
    rep = native(fresh_id(), image, [image.plain[0]])
    del rep["user_id"]
    r = post(server, app, "/api/v1/ingest", rep)
    assert r.status == 400 and "user_id" in r.json["error"]["message"], r
    # The header supplies it.
    server.request("PUT", f"/api/v1/apps/{app['app']}/config", body=b'{"sample_rate":1}',
                   token=app["admin_token"])
    assert post(server, app, "/api/v1/ingest", rep, user="from-header").status == 202
