"""Issue 42, SPEC §10.3: each row of GET …/compare carries the group's
culprit, per side the reports and stall_ms of that version within the
range, the two-sided p of the two-proportion z-test on (affected, sampled)
and the 95% Wald interval of target rate − base rate (both null when a
side has no sampled user-day); base equal to target is a 400.

The expected p and interval are computed here from the counts the test
made (statistics.NormalDist), the culprits from llvm-symbolizer."""

import math
import statistics
import urllib.parse

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, fresh_id, native, post
from test_activity import check_in
from test_api_filters import day_of
from test_culprit import symbolized_culprit
from test_triage_versions import DAY, NOON, get, keys_of

Z95 = statistics.NormalDist().inv_cdf(0.975)


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def p_two_sided(xb, nb, xt, nt):
    pooled = (xb + xt) / (nb + nt)
    var = pooled * (1 - pooled) * (1 / nb + 1 / nt)
    if var <= 0:
        return 1.0
    z = (xt / nt - xb / nb) / math.sqrt(var)
    return 2 * (1 - statistics.NormalDist().cdf(abs(z)))


def wald(xb, nb, xt, nt):
    pb, pt = xb / nb, xt / nt
    se = math.sqrt(pb * (1 - pb) / nb + pt * (1 - pt) / nt)
    return [pt - pb - Z95 * se, pt - pb + Z95 * se]


def test_compare_rows_carry_culprit_counts_p_and_interval(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=b'{"sample_rate":1,"daily_quota":100000}', token=app["admin_token"])
    assert r.status == 200, r
    assert server.upload(app, image.dwarf).status in (200, 201)
    base_users = [f"b-{i}" for i in range(120)]
    target_users = [f"t-{i}" for i in range(90)]
    for u in base_users:
        check_in(server, app, u, "5.0")
    for u in target_users:
        check_in(server, app, u, "5.1")
    f = image.by_function
    # name: (stack, affected users in 5.0, in 5.1)
    plan = {"up": ([f[10], f[11]], 8, 30), "flat": ([f[12], f[13]], 12, 9),
            "fresh": ([f[14], f[15]], 0, 7)}
    reports = []
    n = 0
    for name, (stack, in_base, in_target) in plan.items():
        for version, users, k in (("5.0", base_users, in_base), ("5.1", target_users, in_target)):
            # Two reports each: reports count both, affected user-days once.
            for u in users[:k] * 2:
                n += 1
                reports.append({"name": name, "stack": stack, "user": u, "version": version,
                                "duration": 100 + 37 * n})
    key_of = {}
    for i in range(0, len(reports), 100):
        chunk = reports[i:i + 100]
        bodies = [native(fresh_id(), image, x["stack"], user=x["user"], app_version=x["version"],
                         duration_ms=x["duration"]) for x in chunk]
        reply = post(server, app, "/api/v1/ingest", {"reports": bodies})
        assert reply.status == 202 and not reply.json["rejected"], reply
        for x, a in zip(chunk, reply.json["accepted"]):
            key_of.setdefault(x["name"], keys_of(server, app, a["id"])[0])
    sampled = {"5.0": len(base_users), "5.1": len(target_users)}

    def side(name, version):
        mine = [x for x in reports if x["name"] == name and x["version"] == version]
        return {"affected": len({x["user"] for x in mine}), "sampled": sampled[version],
                "reports": len(mine), "stall_ms": sum(x["duration"] for x in mine)}

    for q in ({}, {"from": day_of(NOON), "to": day_of(NOON)}):
        got = {g["key"]: g for g in get(server, app, "compare", base="5.0", target="5.1",
                                         **q)["groups"]}
        assert set(got) == set(key_of.values())
        for name, (stack, _, _) in plan.items():
            g = got[key_of[name]]
            assert g["culprit"] == symbolized_culprit(image, stack[0]), name
            b, t = side(name, "5.0"), side(name, "5.1")
            for have, want in ((g["base"], b), (g["target"], t)):
                for k in ("affected", "sampled", "reports", "stall_ms"):
                    assert have[k] == want[k], (name, k)
            p = p_two_sided(b["affected"], b["sampled"], t["affected"], t["sampled"])
            assert g["p_value"] == pytest.approx(p, rel=1e-6, abs=1e-12), name
            assert g["diff_ci"] == pytest.approx(
                wald(b["affected"], b["sampled"], t["affected"], t["sampled"]), rel=1e-9), name
    assert get(server, app, "compare", base="5.0", target="5.1",
               **{"from": day_of(NOON + DAY)})["groups"] == []


def test_p_and_interval_are_null_without_sampled_users(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=b'{"sample_rate":1,"daily_quota":100000}', token=app["admin_token"])
    assert r.status == 200, r
    f = image.by_function
    body = native(fresh_id(), image, [f[16], f[17]], user="solo", app_version="2.0",
                  duration_ms=1234)
    assert post(server, app, "/api/v1/ingest", {"reports": [body]}).status == 202
    (g,) = get(server, app, "compare", base="9.9", target="2.0")["groups"]
    assert g["p_value"] is None and g["diff_ci"] is None
    assert g["base"] == {"affected": 0, "sampled": 0, "rate": None, "reports": 0,
                         "stall_ms": 0}
    assert g["target"]["reports"] == 1 and g["target"]["stall_ms"] == 1234
    # Unsymbolized (no dSYM): the culprit names the image and offset.
    assert g["culprit"]["frame"].startswith(image.name + "+0x")
    assert g["culprit"]["function"] is None


def test_base_equal_to_target_is_refused(server, db):
    app = create_app(db)
    r = server.request("GET", f"/api/v1/apps/{app['app']}/compare?"
                       + urllib.parse.urlencode({"base": "3.0", "target": "3.0"}),
                       token=app["admin_token"])
    assert r.status == 400 and r.error_code == "bad_query", r
    assert "base" in r.json["error"]["message"]


def test_compare_pages_and_verdict_tally(db, make_server, image):
    """&limit= cuts the list, &cursor= goes on where a page ended: the pages
    together are the whole list in its order; "verdicts" counts every
    group's verdict on every page. Ties of the sort (equal counts) are
    ordered by key, through the cursor too."""
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config",
                       body=b'{"sample_rate":1,"daily_quota":100000}', token=app["admin_token"])
    assert r.status == 200, r
    for i in range(40):
        check_in(server, app, f"b-{i}", "6.0")
        check_in(server, app, f"t-{i}", "6.1")
    f = image.by_function
    bodies = []
    for g in range(11):
        # Affected users in 6.0 and 6.1: pairs of groups tie (g // 2).
        in_base, in_target = (g // 2) % 3, (g // 2) * 2 % 7
        for version, prefix, k in (("6.0", "b", in_base), ("6.1", "t", in_target)):
            bodies += [native(fresh_id(), image, [f[2 + g], f[20 + g]], user=f"{prefix}-{u}",
                              app_version=version) for u in range(k)]
    assert post(server, app, "/api/v1/ingest", {"reports": bodies}).status == 202
    whole = get(server, app, "compare", base="6.0", target="6.1")
    assert whole["next_cursor"] is None and len(whole["groups"]) >= 9
    tally = {v: sum(g["verdict"] == v for g in whole["groups"])
             for v in ("new", "worse", "better", "same")}
    assert whole["verdicts"] == tally
    paged, cursor = [], None
    while True:
        q = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = get(server, app, "compare", base="6.0", target="6.1", **q)
        assert page["verdicts"] == tally
        assert len(page["groups"]) <= 3
        paged += page["groups"]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert paged == whole["groups"]
    for bad in ({"limit": 0}, {"limit": 1001}, {"cursor": "x"}, {"cursor": "9.zz"}):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/compare?" + urllib.parse.urlencode(
            {"base": "6.0", "target": "6.1", **bad}), token=app["admin_token"])
        assert r.status == 400 and r.error_code == "bad_query", (bad, r)
