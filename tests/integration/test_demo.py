"""`stallscope demo` and the admin-only backfill it uses.

The demo runs against the session's server into a fresh app; everything
is then read back through the API and checked against expectations
computed here: days from the test's own clock, frames from
llvm-symbolizer on the committed dSYM, versions and users from the
reports themselves. The backfill tests post their own reports. And
scripts/run.sh (`make run`) loads it into a database of its own: what the
terminal shows last. Beside the iOS app the demo fills an Android app
(SPEC §13): its groups, startups, frames and mappings are read back
through the API, and the dashboard (tests/browser/android.mjs) must show
what the API answers."""

import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from collections import Counter, defaultdict
from urllib.parse import quote

import pytest

from conftest import BIN, REPO, create_app, free_port, run
from ingest_util import symbolize

DSYM = REPO / "scripts/demo/StallDemo.dwarf"
BUILD_DSYM = REPO / "scripts/demo/build-dsym.sh"
TEXT_VMADDR = 0x100000000  # the demo executable's __TEXT, as ld64 links it
DAY = 86400


def utc_day(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%d")


def utc_time(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")


def run_demo(server, app, tmp_path, *args, android=None):
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(app))
    if android:
        android_keys = tmp_path / "android.json"
        android_keys.write_text(json.dumps(android))
        args = (*args, "--android-keys", str(android_keys))
    return subprocess.run([str(BIN), "demo", "--url", f"http://127.0.0.1:{server.port}",
                           "--keys", str(keys), *args], capture_output=True, text=True,
                          timeout=300)


def get(server, app, path):
    r = server.request("GET", path, token=app["admin_token"])
    assert r.status == 200, r
    return r.json


def pages(server, app, path, field):
    out, cursor = [], None
    while True:
        sep = "&" if "?" in path else "?"
        page = get(server, app, path + (f"{sep}cursor={cursor}" if cursor else ""))
        out += page[field]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


@pytest.fixture(scope="module")
def demo(server, db, tmp_path_factory):
    """A fresh app filled by `stallscope demo`, and every stored report of
    it as the group routes list them; and the Android app it fills beside."""
    app = create_app(db)
    android = create_app(db)
    started = time.time()
    p = run_demo(server, app, tmp_path_factory.mktemp("demo"), android=android)
    assert p.returncode == 0, p.stdout + p.stderr
    assert time.time() - started < 120, "the demo should take seconds"
    base = f"/api/v1/apps/{app['app']}/groups"
    groups = pages(server, app, f"{base}?level=1&limit=100", "groups")
    reports = {}
    report_group = {}
    for g in groups:
        detail = get(server, app, f"{base}/{g['key']}")
        for sub in detail["subgroups"]:
            for r in pages(server, app, f"{base}/{g['key']}/{sub['key']}/reports?limit=100",
                           "reports"):
                reports[r["id"]] = r
                report_group[r["id"]] = g["key"]
    return {"app": app, "groups": groups, "reports": reports, "group_of": report_group,
            "started": started, "stdout": p.stdout, "android": android}


def test_committed_dsym_is_what_the_script_builds(tmp_path):
    out = tmp_path / "StallDemo.dwarf"
    run([BUILD_DSYM, out], timeout=300)
    assert out.read_bytes() == DSYM.read_bytes(), \
        "scripts/demo/StallDemo.dwarf is stale: run scripts/demo/build-dsym.sh"


def test_demo_spreads_a_week_of_reports_over_groups_versions_and_users(demo):
    reports = list(demo["reports"].values())
    assert len(reports) >= 2000
    # The 7 UTC days ending today, from this test's clock.
    now = time.time()
    week = {utc_day(now - d * DAY) for d in range(7)}
    days = Counter(r["received_at"][:10] for r in reports)
    assert set(days) == week, days
    assert len({r["app_version"] for r in reports}) == 3
    assert 400 <= len({r["user_id"] for r in reports}) <= 802
    durations = [r["duration_ms"] for r in reports if r["duration_ms"] is not None]
    assert min(durations) >= 250 and max(durations) <= 30000
    assert min(durations) < 500 and max(durations) > 10000
    assert all(r["received_at"] <= utc_time(now) for r in reports)

    groups = demo["groups"]
    assert len(groups) >= 20
    # Every group's reports add up to what the list says, and the list
    # covers every stored report.
    per_group = Counter(demo["group_of"].values())
    assert {g["key"]: g["reports"] for g in groups} == dict(per_group)
    # Zipf-like: a few stacks dominate.
    counts = sorted(per_group.values(), reverse=True)
    assert counts[0] >= 4 * counts[9], counts
    assert counts[0] >= 0.15 * len(reports), counts


def version_key(v):
    return tuple(int(p) for p in v.split("."))


def test_a_stack_appears_only_in_the_newest_version(server, demo):
    app = demo["app"]
    by_group = defaultdict(set)
    sizes = Counter()
    for rid, r in demo["reports"].items():
        by_group[demo["group_of"][rid]].add(r["app_version"])
        sizes[demo["group_of"][rid]] += 1
    newest = max({r["app_version"] for r in demo["reports"].values()}, key=version_key)
    only_newest = [k for k, vs in by_group.items() if vs == {newest} and sizes[k] >= 10]
    assert only_newest, by_group
    # The version filter agrees: that group is listed for the newest
    # version and for no other.
    base = f"/api/v1/apps/{app['app']}/groups?level=1&limit=100"
    for v in {r["app_version"] for r in demo["reports"].values()}:
        keys = {g["key"] for g in pages(server, app, f"{base}&version={v}", "groups")}
        assert (only_newest[0] in keys) == (v == newest), v


def test_stack_view_symbolizes_demo_frames_with_inline_chains(server, demo):
    app = demo["app"]
    top = max(demo["groups"], key=lambda g: g["reports"])
    rid = next(i for i, k in demo["group_of"].items()
               if k == top["key"] and demo["reports"][i]["report_id"].startswith("demo-1-"))
    rep = get(server, app, f"/api/v1/reports/{rid}")
    image = next(i for i in rep["images"] if i["uuid"] == "4C4C44DC-5555-3144-A1B1-BA29ED3AB7CC"
                 or i["name"].endswith("/StallDemo"))
    assert image["status"] == "found"
    load = int(image["load_address"], 16)
    main = next(t for t in rep["threads"] if t.get("main"))
    ours = [(i, f) for i, f in enumerate(main["frames"]) if f["image"] == image["name"]]
    assert len(ours) >= 3
    # Frame 0 is looked up as is, the others at their return address - 1.
    addrs = [int(f["address"], 16) - load + TEXT_VMADDR - (1 if i else 0) for i, f in ours]
    expected = symbolize(DSYM, addrs)
    inlined = 0
    for (i, f), want in zip(ours, expected):
        got = [(x["function"], x["file"], x["line"]) for x in f["frames"]]
        assert got == want, (i, got, want)
        assert all(x["file"] and x["line"] > 0 for x in f["frames"])
        inlined += len(want) > 1
    assert inlined >= 1


def test_demo_reports_have_traces_formats_and_missing_dsyms(server, demo):
    app = demo["app"]
    reports = demo["reports"]
    # Report ids tell the formats apart: KSCrash's carry "ks", MetricKit's
    # are the server's hash of the entry (32 hex digits).
    sources = Counter()
    for rid, r in reports.items():
        if r["report_id"].startswith("demo-ks-") or len(r["report_id"]) == 32:
            sources[get(server, app, f"/api/v1/reports/{rid}")["source"]] += 1
    assert sources["kscrash"] >= 5 and sources["metrickit"] >= 5, sources

    traced = 0
    for rid in sorted(reports)[:300]:
        if not get(server, app, f"/api/v1/reports/{rid}")["has_samples"]:
            continue
        trace = get(server, app, f"/api/v1/reports/{rid}/trace")
        assert trace["metadata"]["samples"] > 0
        assert trace["traceEvents"]
        traced += 1
    assert traced >= 10

    # The app's own images rank in the default list, Apple's apart.
    base = f"/api/v1/apps/{app['app']}/dsyms/missing"
    missing = get(server, app, base)["missing"]
    names = {m["name"].rsplit("/", 1)[-1] for m in missing}
    assert "AdsKit" in names and "UIKitCore" not in names, names
    assert all(not m["system"] for m in missing)
    assert all(m["uuid"] != "4C4C44DC-5555-3144-A1B1-BA29ED3AB7CC" for m in missing)
    system = get(server, app, base + "?images=system")["missing"]
    system_names = {m["name"].rsplit("/", 1)[-1] for m in system}
    assert "UIKitCore" in system_names and "AdsKit" not in system_names
    assert all(m["system"] for m in system)


def test_demo_again_the_same_day_adds_nothing(server, demo, tmp_path):
    app = demo["app"]
    if utc_day(time.time()) != utc_day(demo["started"]):
        pytest.fail("the UTC day changed during the test; run it again")
    p = run_demo(server, app, tmp_path)
    assert p.returncode == 0, p.stderr
    groups = pages(server, app, f"/api/v1/apps/{app['app']}/groups?level=1&limit=100",
                   "groups")
    assert sum(g["reports"] for g in groups) == len(demo["reports"])


# ---- the Android app (SPEC §13) --------------------------------------------

ANDROID_KINDS = ["slow_method", "anr", "lag", "slow_startup", "thread_policy"]
KIND_LABELS = ["slow method", "ANR", "lag", "slow startup", "thread policy"]
ANDROID_BUILDS = {"3.1.0": "310", "3.2.0": "320"}
SCENES = {f"com.example.android.{s}" for s in (
    "feed.FeedActivity", "ui.MainActivity", "player.PlayerActivity", "search.SearchActivity",
    "ui.SettingsActivity")}
# android.os, java., kotlin., androidx., com.android.: the platform's own
# packages, never a culprit (SPEC §13).
PLATFORM = ("android.", "java.", "kotlin.", "androidx.", "com.android.")


def android_get(server, demo, path, **query):
    app = demo["android"]
    qs = "&".join(f"{k}={quote(str(v), safe='')}" for k, v in query.items())
    return get(server, app, f"/api/v1/apps/{app['app']}{path}" + (f"?{qs}" if qs else ""))


def test_demo_android_groups_read_java_names_of_every_kind(server, demo):
    dims = android_get(server, demo, "/dimensions")
    assert {d["value"] for d in dims["kinds"]} == set(ANDROID_KINDS), dims["kinds"]
    assert {d["value"] for d in dims["versions"]} == set(ANDROID_BUILDS)
    groups = pages(server, demo["android"],
                   f"/api/v1/apps/{demo['android']['app']}/groups?level=1&limit=100", "groups")
    assert len(groups) >= 8
    for g in groups:
        # Every method id resolved: the mappings came before the reports.
        assert g["frames"] and all(f.startswith("java!") and "!#" not in f
                                   for f in g["frames"]), g["frames"]
        c = g.get("culprit")
        if c:
            assert c["function"].startswith("com.example.android."), c
            assert not c["function"].startswith(PLATFORM)
    # A stack's frames read as Java: pkg.Class.method(ArgType, …).
    top = max((g for g in groups if g["frames"][0].startswith("java!com.example.android.")),
              key=lambda g: g["reports"])
    sub = android_get(server, demo, f"/groups/{top['key']}")["subgroups"][0]
    by_version = {}
    for v in ANDROID_BUILDS:
        page = android_get(server, demo, f"/groups/{top['key']}/{sub['key']}/reports",
                           version=v, limit=1)["reports"]
        if page:
            by_version[v] = get(server, demo["android"], f"/api/v1/reports/{page[0]['id']}")
    assert by_version, "the top group has reports"
    ids = defaultdict(set)
    for v, rep in by_version.items():
        assert rep["source"] == "matrix" and rep["build"] == ANDROID_BUILDS[v]
        assert not rep["pending"]
        for f in rep["stack"]["frames"]:
            assert f["image"] == "java" and "address" not in f, f
            if f.get("method_id") is None:
                continue
            assert f["status"] == "symbolicated" and f["ms"] > 0, f
            fn = f["frames"][0]["function"]
            assert re.fullmatch(r"[\w.$]+\.[\w$<>`]+\([\w.$\[\], ]*\)", fn), fn
            ids[fn].add((v, f["method_id"]))
    # Each build's mapping drew its own ids: the same method, other ids.
    if len(by_version) == 2:
        assert any(len({i for _, i in pairs}) == 2 for pairs in ids.values()), ids


def test_demo_android_mappings_startups_and_frames(server, demo):
    mappings = android_get(server, demo, "/method-mappings")["mappings"]
    assert {(m["app_version"], m["build"]) for m in mappings} == set(ANDROID_BUILDS.items())
    # A few hundred methods and the dispatch line, the same in both builds.
    assert len({m["methods"] for m in mappings}) == 1 and mappings[0]["methods"] >= 300
    missing = android_get(server, demo, "/dsyms/missing")["missing"]
    assert not [m for m in missing if m.get("kind") == "method_mapping"], missing

    startup = android_get(server, demo, "/startup")
    assert {v["app_version"] for v in startup["versions"]} == set(ANDROID_BUILDS)
    for v in startup["versions"]:
        for kind in ("cold", "warm"):
            s = v[kind]
            assert s["count"] > 0 and s["p50_ms"] <= s["p90_ms"] <= s["max_ms"], v
        # The days add up to the version's starts.
        for kind in ("cold", "warm"):
            assert sum((d.get(kind) or {}).get("count", 0) for d in startup["days"]
                       if d["app_version"] == v["app_version"]) == v[kind]["count"]
        assert v["cold"]["p50_ms"] > v["warm"]["p50_ms"]

    scenes = android_get(server, demo, "/frames")["scenes"]
    assert {s["scene"] for s in scenes} == SCENES
    share = defaultdict(lambda: [0, 0])
    for s in scenes:
        total = sum(s["frames"].values())
        assert total > 0 and 0 < s["mean_fps"] <= 60, s
        share[s["scene"]][0] += s["frames"]["frozen"]
        share[s["scene"]][1] += total
    # The player janks most, as the data set says.
    worst = max(share, key=lambda k: share[k][0] / share[k][1])
    assert worst == "com.example.android.player.PlayerActivity", share


def test_dashboard_on_the_android_demo(server, demo, tmp_path):
    """What a newcomer reads of the Android app: Java names, a kind filter
    of Android's kinds that filters, a flame graph sized by time, a Java
    stack with method ids and times, startups per version, frames per scene
    and a missing mapping with its version and build — each as the API
    answers it; and no frames page for the iOS app."""
    from test_dashboard import run_browser
    android = demo["android"]
    # A build nobody uploaded a mapping for: its report waits, listed.
    body = {"app_version": "3.3.0", "build": "330", "user_id": "tester-1", "os_version": "14",
            "device": "Pixel 7", "reports": [{
                "tag": "Trace_EvilMethod", "detail": "NORMAL", "cost": 900, "time":
                int(time.time() * 1000), "stack": "0,1048574,1,900\n1,7,1,880\n",
                "stackKey": "7|"}]}
    r = server.request("POST", "/api/v1/ingest/matrix", body=json.dumps(body).encode(),
                       key=android["ingest_key"])
    assert r.status == 202, r

    def api(path, **query):
        return android_get(server, demo, path, **query)

    slow = api("/groups", level=1, kind="slow_method", sort="stall_ms", limit=50)["groups"]
    tree_key = slow[0]["key"]
    seen = run_browser("android.mjs", {
        "url": f"http://127.0.0.1:{server.port}", "app": android["app"],
        "token": android["admin_token"], "ios_app": demo["app"]["app"],
        "ios_token": demo["app"]["admin_token"], "tree_key": tree_key}, tmp_path)
    assert not seen["page_errors"] and not seen["console_errors"], seen
    assert not seen["failed_requests"], seen["failed_requests"]
    for m in seen["overflow"]:
        assert m["client_width"] == 1280 and m["scroll_width"] <= 1280, m
    for m in seen["phone"]:
        assert m["client_width"] == 390 and m["scroll_width"] <= 390, m

    # Groups by their Java culprits; the kind filter offers Android's kinds.
    groups = api("/groups", level=1, sort="stall_ms", limit=50)["groups"]
    assert [g["key"] for g in seen["groups"]] == [g["key"] for g in groups]
    for shown, g in zip(seen["groups"], groups):
        name = (g.get("culprit") or {}).get("function") or g["frames"][0]
        assert name in shown["title"], shown
        # Only the build without a mapping reads by method ids.
        waiting = g["frames"][0].startswith("java!#")
        assert ("com.example.android." in shown["title"]) != waiting, shown
    assert seen["nav_frames"] is True
    counts = {d["value"]: d["reports"] for d in api("/dimensions")["kinds"]}
    assert seen["kind_options"] == [{"value": None, "text": "all"}] + [
        {"value": k, "text": f"{label} ({counts.get(k, 0):,})"}
        for k, label in zip(ANDROID_KINDS, KIND_LABELS)]
    anr = api("/groups", level=1, kind="anr", sort="stall_ms", limit=50)["groups"]
    assert anr and seen["anr"]["keys"] == [g["key"] for g in anr]
    assert seen["anr"]["chosen"] == f"ANR ({counts['anr']:,})"

    # The flame graph by reports, then by time: widths as the API's shares.
    tree = api(f"/groups/{tree_key}/tree")
    top = tree["root"]["children"]
    flame = seen["flame"]
    assert flame["switch"] and all(n["size"] == "ms" for n in flame["by_time"])
    # Its breakdown by kind reads as the filter does.
    assert flame["kinds"] == [dict(zip(ANDROID_KINDS, KIND_LABELS))[b["value"]] for b in
                              api(f"/groups/{tree_key}/breakdown")["by"]["kind"]]
    total_ms = sum(n["ms"] for n in top)
    total = max(tree["reports"], sum(n["count"] for n in top))
    for n in top:
        if min(n["count"] / total, n["ms"] / total_ms) < 0.001:
            continue  # not drawn
        path = json.dumps([n["frame"]], separators=(",", ":"))
        by_count = next(x for x in flame["by_count"] if x["path"] == path)
        by_time = next(x for x in flame["by_time"] if x["path"] == path)
        assert abs(by_count["width"] / by_count["graph_width"] - n["count"] / total) < 0.01
        assert abs(by_time["width"] / by_time["graph_width"] - n["ms"] / total_ms) < 0.01
        assert by_time["ms"] == n["ms"]

    # The Java stack: names, method ids and times as the API has them.
    rep = get(server, android, f"/api/v1/reports/{seen['report']['id']}")
    shown = seen["report"]["frames"]
    assert len(shown) == len(rep["stack"]["frames"])
    for text, f in zip(shown, rep["stack"]["frames"]):
        for sym in f["frames"]:
            assert sym["function"] in text, (sym, text)
        if f.get("method_id") is not None:
            assert f"#{f['method_id']}" in text, text
    # Its one image is the build's method mapping, found.
    assert len(seen["report"]["images"]) == len(rep["images"]) == 1
    assert rep["images"][0]["uuid"] in seen["report"]["images"][0]

    # Startups per version, frames per scene: the API's figures.
    startup = {v["app_version"]: v for v in api("/startup")["versions"]}
    assert {r["version"] for r in seen["startup"]} == set(startup)
    for row in seen["startup"]:
        v = startup[row["version"]]
        for kind in ("cold", "warm"):
            assert int(row[f"{kind}Count"]) == v[kind]["count"]
            assert float(row[f"{kind}P50"]) == v[kind]["p50_ms"]
            assert float(row[f"{kind}P90"]) == v[kind]["p90_ms"]
    frames = {(s["scene"], s["app_version"]): s for s in api("/frames")["scenes"]}
    assert {(r["scene"], r["version"]) for r in seen["frames"]} == set(frames)
    for row in seen["frames"]:
        s = frames[(row["scene"], row["version"])]
        for level in ("best", "normal", "middle", "high", "frozen"):
            assert int(row[level]) == s["frames"][level]
        # Sums of float8 rows: two reads may add them in another order
        # (the last bit of 21.66767705432059 once differed).
        assert float(row["frozenShare"]) == pytest.approx(s["frozen_share"], rel=1e-12)
        assert float(row["meanFps"]) == pytest.approx(s["mean_fps"], rel=1e-12)
        assert f"{s['frames']['frozen']:,}" in row["text"]

    # The build without a mapping, with its version and build; the two
    # mappings uploaded.
    missing = seen["missing"]
    assert missing["nav"] == "Missing mappings"
    wanted = [m for m in api("/dsyms/missing")["missing"] if m.get("kind") == "method_mapping"]
    assert [(m["app_versions"], m["build"]) for m in wanted] == [(["3.3.0"], "330")]
    row = next(r for r in missing["rows"] if r["kind"] == "method_mapping")
    assert (row["version"], row["build"]) == ("3.3.0", "330") and "3.3.0 (build 330)" in row["text"]
    assert {(m["version"], m["build"]) for m in missing["mappings"]} == \
        set(ANDROID_BUILDS.items())
    assert seen["ios"] == {"nav_frames": False, "nav_missing": "Missing dSYMs"}


# ---- the backfill route -----------------------------------------------------

def lone_report(rid, user="u-1"):
    return {"report_id": rid, "user_id": user, "kind": "stall", "duration_ms": 900,
            "app_version": "1.0", "images": [], "threads": [
                {"name": "main", "main": True, "frames": ["0x1000", "0x2000"]}]}


def stored(server, app):
    """{report_id: received_at} of every report of APP."""
    base = f"/api/v1/apps/{app['app']}/groups"
    out = {}
    for g in pages(server, app, f"{base}?level=1&limit=100", "groups"):
        for sub in get(server, app, f"{base}/{g['key']}")["subgroups"]:
            for r in pages(server, app, f"{base}/{g['key']}/{sub['key']}/reports", "reports"):
                out[r["report_id"]] = r["received_at"]
    return out


def backfill(server, app, at, body, token=None, key=None, fmt=None, user=None):
    path = f"/api/v1/apps/{app['app']}/backfill"
    if at is not None:
        path += f"?received_at={quote(at, safe='')}"
        if fmt:
            path += f"&format={fmt}"
    headers = {"X-Stallscope-User": user} if user else None
    return server.request("POST", path, body=json.dumps(body).encode(), headers=headers,
                          token=token, key=key)


def test_backfill_stores_reports_on_the_day_given_admin_only(server, db):
    app = create_app(db)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config", token=app["admin_token"],
                       body=b'{"sample_rate":1}')
    assert r.status == 200, r
    now = time.time()
    yesterday = utc_day(now - DAY)
    at = f"{yesterday}T10:00:00Z"

    # Devices cannot: the ingest key is no credential of the route, as a
    # header or as a bearer token, nor is the upload token.
    r = backfill(server, app, at, lone_report("dev-1"), key=app["ingest_key"])
    assert r.status == 401, r
    r = backfill(server, app, at, lone_report("dev-2"), token=app["ingest_key"])
    assert r.status == 403, r
    r = backfill(server, app, at, lone_report("dev-3"), token=app["upload_token"])
    assert r.status == 403, r
    # …and the devices' route takes no received_at: it is ignored, the
    # report is received now.
    r = server.request("POST", f"/api/v1/ingest?received_at={at}",
                       body=json.dumps(lone_report("dev-4")).encode(), key=app["ingest_key"])
    assert r.status == 202, r

    r = backfill(server, app, at, {"reports": [lone_report("adm-1"), lone_report("adm-2", "u-2")]},
                 token=app["admin_token"])
    assert r.status == 202, r
    assert len(r.json["accepted"]) == 2
    got = stored(server, app)
    assert set(got) == {"dev-4", "adm-1", "adm-2"}
    assert got["adm-1"] == got["adm-2"] == at
    assert got["dev-4"][:10] == utc_day(time.time()) and got["dev-4"] >= utc_time(now - 5)
    # The day is the one the group routes count it under.
    groups = get(server, app, f"/api/v1/apps/{app['app']}/groups?level=1"
                              f"&from={yesterday}&to={yesterday}")["groups"]
    assert sum(g["reports"] for g in groups) == 2


def test_backfill_other_formats(server, db):
    app = create_app(db)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config", token=app["admin_token"],
                       body=b'{"sample_rate":1}')
    assert r.status == 200, r
    at = f"{utc_day(time.time() - 2 * DAY)}T08:30:00Z"
    ks = {"report": {"id": "ks-1"}, "user": {"user_id": "u-9"}, "binary_images": [],
          "crash": {"error": {"type": "user", "user_reported": {"name": "2001"}},
                    "threads": [{"index": 0, "backtrace": {"contents": [
                        {"instruction_addr": 4096}]}}]}}
    r = backfill(server, app, at, ks, token=app["admin_token"], fmt="kscrash")
    assert r.status == 202, r
    assert stored(server, app) == {"ks-1": at}
    r = backfill(server, app, at, ks, token=app["admin_token"], fmt="pdf")
    assert r.status == 400 and r.error_code == "bad_query", r


def test_backfill_applies_quota_and_sampling_on_that_day(server, db):
    app = create_app(db)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config", token=app["admin_token"],
                       body=b'{"sample_rate":1,"daily_quota":1}')
    assert r.status == 200, r
    now = time.time()
    day3 = f"{utc_day(now - 3 * DAY)}T12:00:00Z"
    day2 = f"{utc_day(now - 2 * DAY)}T12:00:00Z"
    tok = app["admin_token"]
    assert backfill(server, app, day3, lone_report("q-1"), token=tok).status == 202
    # The quota of that day is used up; another day's is not.
    r = backfill(server, app, day3, lone_report("q-2"), token=tok)
    assert r.status == 429 and r.error_code == "quota_exhausted", r
    assert backfill(server, app, day2, lone_report("q-3"), token=tok).status == 202
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config", token=tok,
                       body=b'{"sample_rate":0}')
    assert r.status == 200, r
    r = backfill(server, app, day2, lone_report("q-4", "u-5"), token=tok)
    assert r.status == 403 and r.error_code == "not_sampled", r
    assert set(stored(server, app)) == {"q-1", "q-3"}


def test_backfill_refuses_times_outside_retention(server, db):
    app = create_app(db)
    tok = app["admin_token"]
    now = time.time()
    oldest = utc_day(now - 6 * DAY)  # retention_days 7: today and 6 days before
    for at in [None, "yesterday", f"{utc_day(now)}T10:00:00", f"{utc_day(now)} 10:00:00Z",
               "2026-02-30T10:00:00Z", utc_time(now + 3600),
               f"{utc_day(now - 7 * DAY)}T23:59:59Z"]:
        r = backfill(server, app, at, lone_report("x"), token=tok)
        assert r.status == 400 and r.error_code == "bad_query", (at, r)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config", token=tok,
                       body=b'{"sample_rate":1}')
    assert r.status == 200, r
    r = backfill(server, app, f"{oldest}T00:00:00Z", lone_report("edge"), token=tok)
    assert r.status == 202, r
    assert stored(server, app) == {"edge": f"{oldest}T00:00:00Z"}


# ---- what the triage views show (issue 26) -------------------------------------

def test_demo_counts_active_and_sampled_users_every_day(server, demo):
    app = demo["app"]
    stats = get(server, app, f"/api/v1/apps/{app['app']}/stats")["days"]
    now = time.time()
    week = {utc_day(now - d * DAY) for d in range(7)}
    assert {s["day"] for s in stats} == week, stats
    reports_by_day = Counter(r["received_at"][:10] for r in demo["reports"].values())
    testers = {"tester-1", "tester-2"}
    for day in week:
        rows = [s for s in stats if s["day"] == day]
        active = sum(s["active_users"] for s in rows)
        sampled = sum(s["sampled_users"] for s in rows)
        # 800 users open the app on 80% of days, half of them sampled;
        # the two testers check in every day and are in no sample.
        assert 560 <= active <= 722, (day, rows)
        assert 0.3 * active <= sampled <= 0.7 * active, (day, rows)
        assert sum(s["reports"] for s in rows) == reports_by_day[day], (day, rows)
        # Every reporter but the testers was sampled that day.
        reporters = {r["user_id"] for r in demo["reports"].values()
                     if r["received_at"][:10] == day}
        assert sum(s["stalled_users"] for s in rows) == len(reporters - testers), day
    assert {r["user_id"] for r in demo["reports"].values()} >= testers


def test_demo_shows_a_regression_in_the_newest_version(demo):
    """One stack became four times as frequent in 2.5.0: its share of the
    version's reports is at least twice its share in 2.4.0."""
    lock = [g["key"] for g in demo["groups"]
            if any("__psynch_mutexwait" in f for f in g["frames"])]
    assert len(lock) == 1, [g["frames"] for g in demo["groups"]]
    per_version = Counter(r["app_version"] for r in demo["reports"].values())
    in_lock = Counter(r["app_version"] for rid, r in demo["reports"].items()
                      if demo["group_of"][rid] == lock[0])
    share = {v: in_lock[v] / per_version[v] for v in per_version}
    assert share["2.5.0"] >= 2 * share["2.4.0"], share


def test_backfill_check_ins_count_active_users_on_that_day(server, db):
    app = create_app(db)
    admin = app["admin_token"]
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/config", token=admin,
                       body=b'{"sample_rate":0.5}')
    assert r.status == 200, r
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/w-1", token=admin,
                       body=b'{}')
    assert r.status in (200, 201), r
    day = utc_day(time.time() - DAY)
    at = f"{day}T09:00:00Z"
    users = [f"u-{i}" for i in range(40)]
    calls = [{"user_id": u, "app_version": "3.1"} for u in users + ["w-1", "u-0"]]

    assert backfill(server, app, at, {"check_ins": calls}, key=app["ingest_key"],
                    fmt="check_ins").status == 401
    for bad in ({"check_ins": []}, {"check_ins": [{"user_id": "u-1"}]}, {"calls": calls},
                {"check_ins": [{"user_id": "x" * 300, "app_version": "1"}]}):
        r = backfill(server, app, at, bad, token=admin, fmt="check_ins")
        assert r.status == 400 and r.error_code == "bad_field", (bad, r)

    r = backfill(server, app, at, {"check_ins": calls}, token=admin, fmt="check_ins")
    assert r.status == 200, r
    answers = r.json["check_ins"]
    assert [a["user_id"] for a in answers] == [c["user_id"] for c in calls]
    upload = {a["user_id"]: a["upload"] for a in answers}
    assert answers[40] == {"user_id": "w-1", "upload": True, "reason": "whitelisted"}
    assert {a["reason"] for a in answers[:40]} <= {"sampled", "not_sampled"}
    assert 5 <= sum(upload[u] for u in users) <= 35

    # The answers are the ones ingest applies on that day: a report of
    # each user backfilled at the same time is stored exactly when told.
    for u in users[:12]:
        r = backfill(server, app, at, dict(lone_report(f"r-{u}", u), app_version="3.1"),
                     token=admin)
        assert r.status == (202 if upload[u] else 403), (u, r)

    # Counted once per user and day, whitelisted users as active only.
    stats = get(server, app, f"/api/v1/apps/{app['app']}/stats?from={day}&to={day}")
    assert len(stats["days"]) == 1, stats
    row = stats["days"][0]
    assert (row["day"], row["version"]) == (day, "3.1")
    assert row["active_users"] == 41
    assert row["sampled_users"] == sum(upload[u] for u in users)
    assert row["stalled_users"] == row["reports"] == sum(upload[u] for u in users[:12])


class RunScript:
    """scripts/run.sh (what `make run` runs) from a copy of the scripts in
    ROOT, so its var/ is ROOT's, against DB_URL (no cluster of its own) on
    PORT, with the built binary; stdout and stderr as one stream of lines,
    read as they come."""

    def __init__(self, root, db_url, port, env=None):
        (root / "scripts").mkdir(parents=True, exist_ok=True)
        for name in ("run.sh", "install-deps.sh", "pg.sh"):
            shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
        # The demo's dSYM, which `stallscope demo` finds under the current
        # folder when none is beside the binary's (the sanitizer build's).
        shutil.copytree(REPO / "scripts" / "demo", root / "scripts" / "demo",
                        dirs_exist_ok=True)
        full = {k: v for k, v in os.environ.items() if not k.startswith("STALLSCOPE_")}
        # The schema named: a binary of another build folder (the sanitizer
        # build's build/asan/) finds none beside it.
        full.update({"STALLSCOPE_BIN": str(BIN), "STALLSCOPE_DATABASE_URL": db_url,
                     "STALLSCOPE_LISTEN": f"127.0.0.1:{port}",
                     "STALLSCOPE_SCHEMA_DIR": str(REPO / "schema")}, **(env or {}))
        self.lines = []
        self.p = subprocess.Popen(["bash", str(root / "scripts/run.sh")], cwd=root, env=full,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern, timeout=180):
        """The index of the first line matching PATTERN, once it came."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for i, line in enumerate(list(self.lines)):
                if re.search(pattern, line):
                    return i
            assert self.p.poll() is None, "\n".join(self.lines[-40:])
            time.sleep(0.1)
        raise AssertionError(f"no {pattern!r} in:\n" + "\n".join(self.lines[-40:]))

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        assert self.p.wait(timeout=60) == 0, "\n".join(self.lines[-40:])
        self.reader.join(timeout=10)


def test_make_run_ends_with_the_dashboard_and_credentials_and_no_access_log(cluster,
                                                                           tmp_path):
    """`make run` loads the demo (hundreds of requests), then its last lines
    are the dashboard's address and the demo app's credentials; no access
    line reaches the terminal unless STALLSCOPE_ACCESS_LOG=1 asks."""
    db_url = cluster.create_db("make_run")
    root = tmp_path / "checkout"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    script = RunScript(root, db_url, port)
    try:
        end = script.wait_for(r"^Serving until Ctrl-C\.$")
        time.sleep(1)  # a stray line after the end would show now
        lines = list(script.lines)
    finally:
        script.stop()
    keys = json.loads((root / "var/demo-app.json").read_text())
    assert (root / "var/demo-loaded").exists(), "\n".join(lines[-60:])
    loaded = next(i for i, ln in enumerate(lines) if ln.startswith("demo: uploaded StallDemo"))
    assert "0 refused" in lines[loaded]
    tail = lines[end - 4:end + 1]
    assert tail == [f"Dashboard: {base}/ (sign in with com.example.demo and the admin token)",
                    f"  ingest key    {keys['ingest_key']}",
                    f"  upload token  {keys['upload_token']}",
                    f"  admin token   {keys['admin_token']}",
                    "Serving until Ctrl-C."], "\n".join(lines[loaded:])
    assert end > loaded and lines[end + 1:] == [], lines[end + 1:]
    assert not [ln for ln in lines if " access method=" in ln], "\n".join(lines[-40:])

    # Again with the access log asked for: the demo is loaded already, the
    # credentials still come last, and a request is logged.
    script = RunScript(root, db_url, port, {"STALLSCOPE_ACCESS_LOG": "1"})
    try:
        end = script.wait_for(r"^Serving until Ctrl-C\.$")
        assert script.lines[end - 1] == f"  admin token   {keys['admin_token']}"
        assert not [ln for ln in script.lines if ln.startswith("demo: uploaded")]
        urllib.request.urlopen(f"{base}/healthz", timeout=30).read()
        script.wait_for(r" access method=GET path=/healthz status=200 ", timeout=30)
    finally:
        script.stop()
