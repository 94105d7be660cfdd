"""Issue 4: reports in all four formats, symbolized against uploaded
fixture dSYMs, must show exactly llvm-symbolizer's frames (with caller
adjustment), and land in the groups their innermost 2 and 4 identities
define — both computed here from llvm-symbolizer's answers."""

import collections
import json

import pytest

from conftest import create_app, fixture_of
from ingest_util import (Image, allow_everyone, expected_frames, fresh_id, frames_of,
                         identities, ips, kscrash, metrickit, native, post, report)


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


@pytest.fixture(scope="module")
def app(server, db, image):
    a = create_app(db)
    r = server.upload(a, image.dwarf)
    assert r.status in (200, 201), r
    allow_everyone(server, a)
    return a


def stacks(image):
    """Stacks innermost first: an inlined PC with callers, and others."""
    assert image.inlined and len(image.by_function) >= 6
    f = image.by_function
    return [[image.inlined[0], f[1], f[2], f[3]],
            [image.inlined[-1], f[4]],
            [f[5], f[1], f[2]]]


def check_report(rep, image, stack):
    want = expected_frames(image, stack)
    got = frames_of(rep["threads"][0]["frames"])
    assert got == want
    assert all(f["status"] == "symbolicated" for f in rep["threads"][0]["frames"])
    assert rep["images"][0]["status"] == "found"
    assert not rep["pending"]
    # The representative stack is the main thread here (stored as a
    # reference to it, shown whole); its identities are the group's frames.
    assert rep["stack"]["source"] == "main_thread" and rep["stack"]["thread"] == 0
    assert rep["stack"]["frames"] == rep["threads"][0]["frames"]
    ids = identities(image.name, want)
    assert rep["frames"] == ids[:4]
    return ids


def test_native_report_matches_llvm_symbolizer(server, app, image):
    for stack in stacks(image):
        r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, stack))
        assert r.status == 202, r
        (acc,) = r.json["accepted"]
        check_report(report(server, app, acc["id"]), image, stack)


def test_metrickit_payload_matches_llvm_symbolizer(server, app, image):
    stack = stacks(image)[0]
    r = post(server, app, "/api/v1/ingest/metrickit", metrickit(image, stack),
             user="mk-user")
    assert r.status == 202, r
    (acc,) = r.json["accepted"]
    rep = report(server, app, acc["id"])
    check_report(rep, image, stack)
    assert rep["user_id"] == "mk-user"
    assert rep["duration_ms"] == 3000
    assert rep["os_version"] == "17.2"
    # The same payload again is the same report, not a second one.
    again = post(server, app, "/api/v1/ingest/metrickit", metrickit(image, stack),
                 user="mk-user")
    assert again.json["accepted"] == r.json["accepted"]


def test_kscrash_report_matches_llvm_symbolizer(server, app, image):
    stack = stacks(image)[1]
    r = post(server, app, "/api/v1/ingest/kscrash", kscrash(fresh_id(), image, stack))
    assert r.status == 202, r
    rep = report(server, app, r.json["accepted"][0]["id"])
    check_report(rep, image, stack)
    assert rep["kind"] == "stall"


def test_ips_file_matches_llvm_symbolizer(server, app, image):
    stack = stacks(image)[2]
    r = post(server, app, "/api/v1/ingest/ips", ips(fresh_id(), image, stack), user="ips-u")
    assert r.status == 202, r
    rep = report(server, app, r.json["accepted"][0]["id"])
    check_report(rep, image, stack)
    assert rep["kind"] == "hang"


def all_groups(server, app, level, **query):
    out, cursor = [], None
    while True:
        q = "&".join([f"level={level}", "limit=2"] + [f"{k}={v}" for k, v in query.items()]
                     + ([f"cursor={cursor}"] if cursor else []))
        r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?{q}",
                           token=app["admin_token"])
        assert r.status == 200, r
        out += r.json["groups"]
        cursor = r.json["next_cursor"]
        if not cursor:
            return out


def test_group_counts_equal_independent_counts(server, db, image):
    app = create_app(db)
    assert server.upload(app, image.dwarf).status in (200, 201)
    allow_everyone(server, app)
    # Reports over a few stacks and users, posted in every format.
    plan = []
    s = stacks(image)
    for i in range(12):
        plan.append((s[i % 3], f"user-{i % 4}", ["native", "kscrash", "ips"][i % 3]))
    want1, want2 = collections.Counter(), collections.Counter()
    users1 = collections.defaultdict(set)
    for stack, user, fmt in plan:
        ids = identities(image.name, expected_frames(image, stack))
        want1[tuple(ids[:2])] += 1
        want2[tuple(ids[:4])] += 1
        users1[tuple(ids[:2])].add(user)
        if fmt == "native":
            r = post(server, app, "/api/v1/ingest", native(fresh_id(), image, stack, user=user))
        elif fmt == "kscrash":
            r = post(server, app, "/api/v1/ingest/kscrash",
                     kscrash(fresh_id(), image, stack, user=user))
        else:
            r = post(server, app, "/api/v1/ingest/ips", ips(fresh_id(), image, stack),
                     user=user)
        assert r.status == 202, r
    got1 = {tuple(g["frames"]): g for g in all_groups(server, app, 1)}
    got2 = {tuple(g["frames"]): g for g in all_groups(server, app, 2)}
    assert {k: g["reports"] for k, g in got1.items()} == dict(want1)
    assert {k: g["reports"] for k, g in got2.items()} == dict(want2)
    assert {k: g["users"] for k, g in got1.items()} == {k: len(v) for k, v in users1.items()}
    # Level-2 groups sit inside their level-1 group.
    keys1 = {g["key"]: k for k, g in got1.items()}
    for k, g in got2.items():
        assert keys1[g["parent"]] == k[:2]
    # The detail of a group lists its subgroups and their reports.
    top = max(got1.values(), key=lambda g: g["reports"])
    d = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{top['key']}",
                       token=app["admin_token"])
    assert d.status == 200, d
    assert sum(g["reports"] for g in d.json["subgroups"]) == top["reports"]
    sub = d.json["subgroups"][0]
    ids, cursor = [], None
    while True:
        path = f"/api/v1/apps/{app['app']}/groups/{top['key']}/{sub['key']}/reports?limit=1"
        if cursor:
            path += f"&cursor={cursor}"
        page = server.request("GET", path, token=app["admin_token"])
        assert page.status == 200, page
        ids += [r["id"] for r in page.json["reports"]]
        cursor = page.json["next_cursor"]
        if not cursor:
            break
    assert len(ids) == len(set(ids)) == sub["reports"]
    assert ids == sorted(ids, reverse=True)  # newest first


def test_group_list_filters_and_sorting(server, db, image):
    app = create_app(db)
    assert server.upload(app, image.dwarf).status in (200, 201)
    allow_everyone(server, app)
    s = stacks(image)
    posts = [(s[0], "a", "1.0"), (s[0], "b", "1.0"), (s[0], "b", "2.0"), (s[1], "c", "2.0"),
             (s[1], "d", "2.0"), (s[1], "e", "2.0"), (s[2], "f", "1.0")]
    for stack, user, version in posts:
        r = post(server, app, "/api/v1/ingest",
                 native(fresh_id(), image, stack, user=user, app_version=version))
        assert r.status == 202, r
    by_count = all_groups(server, app, 1, sort="count")
    assert [g["reports"] for g in by_count] == sorted((g["reports"] for g in by_count),
                                                      reverse=True)
    by_users = all_groups(server, app, 1, sort="users")
    assert [g["users"] for g in by_users] == sorted((g["users"] for g in by_users),
                                                    reverse=True)
    v2 = all_groups(server, app, 1, version="2.0")
    assert sorted(g["reports"] for g in v2) == [1, 3]
    assert sum(g["daily"][0]["reports"] for g in v2) == 4
    day = v2[0]["daily"][0]["day"]
    # Level 2 filters the same rows: each subgroup's count and series.
    v2_sub = all_groups(server, app, 2, version="2.0")
    assert sorted(g["reports"] for g in v2_sub) == [1, 3]
    assert sorted(g["users"] for g in v2_sub) == [1, 3]
    assert all(sum(d["reports"] for d in g["daily"]) == g["reports"] for g in v2_sub)
    assert sorted(g["reports"] for g in all_groups(server, app, 2)) == [1, 3, 3]
    assert sum(g["reports"] for g in all_groups(server, app, 1, **{"from": day, "to": day})) == 7
    assert all_groups(server, app, 1, **{"from": "2000-01-01", "to": "2000-01-02"}) == []
    for bad in ("level=3", "sort=best", "from=2026-13-01", "kind=boom", "limit=0",
                "cursor=zz"):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?{bad}",
                           token=app["admin_token"])
        assert r.status == 400, (bad, r)


def test_batch_accepts_good_entries_and_names_bad_ones(server, app, image):
    good = native(fresh_id(), image, stacks(image)[0])
    bad = native(fresh_id(), image, stacks(image)[0])
    bad["threads"][0]["frames"][1] = "not-an-address"
    r = post(server, app, "/api/v1/ingest", {"reports": [good, bad]})
    assert r.status == 202, r
    assert [a["report_id"] for a in r.json["accepted"]] == [good["report_id"]]
    (rej,) = r.json["rejected"]
    assert rej["report_id"] == bad["report_id"]
    assert rej["error"]["code"] == "bad_field"
    assert "threads[0].frames[1]" in rej["error"]["message"]
    # Alone, the bad report gets its own status.
    lone = post(server, app, "/api/v1/ingest", bad)
    assert lone.status == 400 and lone.error_code == "bad_field", lone


def test_resend_is_idempotent(server, app, image):
    rep = native(fresh_id(), image, stacks(image)[1])
    first = post(server, app, "/api/v1/ingest", rep)
    second = post(server, app, "/api/v1/ingest", rep, encoding="gzip")
    assert first.status == second.status == 202
    assert first.json["accepted"] == second.json["accepted"]
    rid = first.json["accepted"][0]["id"]
    r = server.request("GET", f"/api/v1/reports/{rid}", token=app["admin_token"])
    assert r.json["report_id"] == rep["report_id"]


def test_unsymbolized_frames_keep_hints_and_offsets(server, db, image):
    app = create_app(db)  # no dSYM uploaded for this app
    allow_everyone(server, app)
    stack = stacks(image)[0]
    rep = native(fresh_id(), image, stack)
    rep["threads"][0]["frames"][0] = {"address": rep["threads"][0]["frames"][0],
                                      "symbol": "-[Hinted method]"}
    rep["threads"][0]["frames"].append("0x7fff00001000")  # in no listed image
    r = post(server, app, "/api/v1/ingest", rep)
    assert r.status == 202, r
    got = report(server, app, r.json["accepted"][0]["id"])
    frames = got["threads"][0]["frames"]
    assert [f["status"] for f in frames] == ["missing_symbols"] * len(stack) + ["unknown_image"]
    assert got["images"][0]["status"] == "missing"
    assert got["pending"]
    off = image.runtime(stack[1], 1) - 0x104000000
    assert got["frames"][:2] == [f"{image.name}!-[Hinted method]", f"{image.name}+{hex(off)}"]
    # The grouping key is the XXH3 of the joined identities, the same for
    # the same unsymbolized stack.
    r2 = post(server, app, "/api/v1/ingest", dict(rep, report_id=fresh_id()))
    again = report(server, app, r2.json["accepted"][0]["id"])
    assert (again["key1"], again["key2"]) == (got["key1"], got["key2"])
    assert json.loads(json.dumps(got["frames"])) == again["frames"]
