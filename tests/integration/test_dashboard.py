"""The web dashboard (SPEC §7, GET /) in headless Chromium, against the
real server and PostgreSQL: what a user reads at each step must be what
llvm-symbolizer says of the stacks and what the test posted (counted here,
not by the server), and what they change (the whitelist) must reach the
database; no view may scroll sideways at 1280 px. tests/browser/dashboard.mjs
does the clicking and reports what it saw."""

import json
import re
import subprocess
import uuid as uuidlib
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import create_app, fixture_of, stallscope
from ingest_util import (LOAD, Image, allow_everyone, expected_frames, fresh_id, identities,
                         native, post)

BROWSER_DIR = Path(__file__).resolve().parents[1] / "browser"
HOSTILE_USER = '<img src=x onerror="alert(1)">'
# One unbroken word as wide as ten screens of a phone: it must wrap.
LONG_USER = "device-" + "9f3a" * 48
# Image paths as iOS writes them: long, without a place to break.
APP_FRAMEWORK = ("/private/var/containers/Bundle/Application/3F2504E0-4F89-11D3-9A0C-0305E82C3301"
                 "/Demo.app/Frameworks/DemoRenderingPipelineSupport.framework/DemoRenderingPipelineSupport")
UIKIT = "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore"
KERNEL = "/usr/lib/system/libsystem_kernel.dylib"
MISSING_PAGE = 50  # rows the dashboard asks for per page (web/lib-api.js PAGE)


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def run_browser(script, scenario, tmp_path):
    """What SCRIPT (tests/browser/) saw, driving the dashboard through SCENARIO."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    p = subprocess.run(["node", str(BROWSER_DIR / script), str(path)],
                       cwd=BROWSER_DIR, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def version_key(v):
    """SPEC §10.3's order: dot-separated parts of digit runs (numbers) and
    other runs (text, after numbers); what ends first comes first."""
    return [[(0, int(run)) if run.isdigit() else (1, run)
             for run in re.findall(r"[0-9]+|[^0-9]+", part)] for part in v.split(".")]


def utc_text(iso):
    """An API time as the page must show it: UTC, to the second."""
    t = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


def image_entry(name, load, uid=None):
    return {"name": name, "uuid": uid or str(uuidlib.uuid4()).upper(), "arch": "arm64",
            "load_address": hex(load), "size": 0x100000}


def cells(text):
    return [c.strip() for c in text.split("\t")]


def test_dashboard_from_groups_to_stack(server, db, image, tmp_path):
    app = create_app(db)
    assert server.upload(app, image.dwarf).status in (200, 201)
    allow_everyone(server, app)
    f = image.by_function
    deep = [image.inlined[0], f[1], f[2], f[3], f[4]]
    other = [f[5], f[1]]
    # Every report posted, as (stack, app version, os version, device, user,
    # id): the counts the pages must show are computed from this list.
    posted = []

    def send(stack_name, body):
        r = post(server, app, "/api/v1/ingest", body)
        assert r.status == 202, r
        posted.append((stack_name, body["app_version"], body["os_version"],
                       body.get("device", ""), body["user_id"], r.json["accepted"][0]["id"]))

    # The deep stack's reports also load an app framework with a long path
    # and a system library, neither with a frame (so none waits for them).
    extra_images = [image_entry(APP_FRAMEWORK, LOAD + 0x20000000),
                    image_entry(UIKIT, LOAD + 0x30000000)]
    for user in ["ana", "ben", "ana", HOSTILE_USER]:
        body = native(fresh_id(), image, deep, user=user)
        body["images"] += extra_images
        send("deep", body)
    for user in ["dan", LONG_USER, "dan"]:
        send("deep", native(fresh_id(), image, deep, user=user, app_version="9.0.0",
                            os_version="18.1", device="iPhone16,1"))
    # One without a device: the pick list offers that as "(not set)".
    no_device = native(fresh_id(), image, other, user="cy")
    del no_device["device"]
    send("other", no_device)
    # Two reports with a frame in an app image that has no dSYM here (they
    # wait, listed missing) and one in a system library (listed apart).
    absent = str(uuidlib.uuid4()).upper()
    kernel = str(uuidlib.uuid4()).upper()
    absent_path = APP_FRAMEWORK.replace("DemoRenderingPipelineSupport", "AbsentKit")
    for _ in range(2):
        waiting = native(fresh_id(), image, [f[5]], user="cy")
        waiting["images"] += [image_entry(absent_path, LOAD + 0x10000000, absent),
                              image_entry(KERNEL, LOAD + 0x40000000, kernel)]
        waiting["threads"][0]["frames"] += [hex(LOAD + 0x10000000 + 0x2000),
                                            hex(LOAD + 0x40000000 + 0x1000)]
        send("waiting", waiting)
    # One more with a frame in each of more plug-ins than a page lists.
    plugins = [str(uuidlib.uuid4()).upper() for _ in range(MISSING_PAGE + 5)]
    crowded = native(fresh_id(), image, [f[5]], user="eve")
    for i, uid in enumerate(plugins):
        load = LOAD + 0x50000000 + i * 0x200000
        crowded["images"].append(image_entry(f"/private/var/containers/Bundle/Application/"
                                             f"Demo.app/PlugIns/Widget{i}.appex/Widget{i}",
                                             load, uid))
        crowded["threads"][0]["frames"].append(hex(load + 0x1000))
    send("crowded", crowded)
    token = app["admin_token"]
    assert server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/vip-0",
                          body=b'{"note": "from the API"}', token=token).status in (200, 201)

    # What to find, from llvm-symbolizer (never from the server's answers),
    # and the keys the API gives those groups.
    chains = expected_frames(image, deep)
    want = identities(image.name, chains)
    groups = server.request("GET", f"/api/v1/apps/{app['app']}/groups",
                            token=token).json["groups"]
    (group,) = [g for g in groups if g["frames"] == want[:2]]
    detail = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{group['key']}",
                            token=token).json
    (sub,) = [g for g in detail["subgroups"] if g["frames"] == want[:4]]

    # The filter the user picks: the new version over the last ten UTC days
    # (every report was received today).
    today = datetime.now(timezone.utc).date()
    flt = {"from": str(today - timedelta(days=9)), "to": str(today), "version": "9.0.0"}
    deep_ids = [p[5] for p in posted if p[0] == "deep"]
    new_ids = [p[5] for p in posted if p[0] == "deep" and p[1] == "9.0.0"]
    seen = run_browser("dashboard.mjs", {"url": f"http://127.0.0.1:{server.port}", "app": app["app"],
                          "token": token, "key1": group["key"], "key2": sub["key"],
                          "report_id": str(deep_ids[0]), "missing_uuid": absent,
                          "missing_total": 1 + len(plugins),
                          "whitelist_add": "vip-1", "whitelist_remove": "vip-0",
                          "filter": flt, "filtered_report_id": str(new_ids[0]),
                          "no_device_label": "(not set) (1)",
                          "sample_rate": 0.25}, tmp_path)

    assert not seen["page_errors"] and not seen["dialogs"], seen
    # No request failed until the wrong token's, which must fail as 401.
    failed = seen["failed_requests"]
    assert seen["failed_before_bad_token"] == 0, failed
    assert seen["console_errors_before_bad_token"] == 0, seen["console_errors"]
    assert failed and {r["status"] for r in failed} == {401}, failed
    # No view scrolls sideways, at 1280 px or on a phone.
    measured = {m["view"] for m in seen["overflow"]}
    assert measured == {"groups", "groups, filtered", "group, filtered", "reports, filtered",
                        "group", "reports", "report", "missing dSYMs", "whitelist", "config"}
    for m in seen["overflow"] + seen["phone"]:
        assert m["client_width"] in (1280, 390) and m["scroll_width"] <= m["client_width"], m
    assert len(seen["phone"]) == 7
    assert "UTC" in seen["tz"]

    def users_of(rows):
        return len({p[4] for p in rows})

    deep_rows = [p for p in posted if p[0] == "deep"]
    new_rows = [p for p in deep_rows if p[1] == "9.0.0"]
    # The group's row names its innermost two frames and counts what was
    # posted: 7 reports from 5 users.
    (row,) = [g for g in seen["groups"] if g["key"] == group["key"]]
    for identity in want[:2]:
        assert identity in row["text"]
    assert cells(row["text"])[1:3] == [str(len(deep_rows)), str(users_of(deep_rows))], row
    assert len(seen["groups"]) == len(groups)

    # The pick lists: "all", then what was posted with its report count.
    def counted(i):
        values = {}
        for p in posted:
            values[p[i]] = values.get(p[i], 0) + 1
        return values

    picks = seen["pick_lists"]
    for name, i in [("version", 1), ("os_version", 2), ("device", 3)]:
        assert picks[name][0] == {"value": "", "text": "all"}, picks[name]
        assert sorted((o["value"], o["text"]) for o in picks[name][1:]) == \
            sorted((v, f"{v or '(not set)'} ({n})") for v, n in counted(i).items()), picks[name]
    # Versions newest first in the version order (SPEC §10.3), the others
    # in the API's order.
    dims = server.request("GET", f"/api/v1/apps/{app['app']}/dimensions", token=token).json
    assert [o["value"] for o in picks["version"][1:]] == \
        sorted((d["value"] for d in dims["versions"]), key=version_key, reverse=True)
    for name, key in [("os_version", "os_versions"), ("device", "devices"), ("kind", "kinds")]:
        assert [o["value"] for o in picks[name][1:]] == [d["value"] for d in dims[key]]
    assert picks["kind"] == [{"value": "", "text": "all"},
                             {"value": "stall", "text": f"stall ({len(posted)})"}]

    # Filtered to reports without a device: the one posted so, in its group.
    want_other = identities(image.name, expected_frames(image, other))
    (other_group,) = [g for g in groups if g["frames"] == want_other[:2]]
    assert [(r["key"], cells(r["text"])[1:3]) for r in seen["no_device"]] == \
        [(other_group["key"], ["1", "1"])]

    # Opened from the filtered list, the group, its subgroup and its
    # reports count only the new version's reports, over the chosen days.
    fl = seen["filtered"]
    assert [r["key"] for r in fl["list"]] == [group["key"]]
    assert cells(fl["list"][0]["text"])[1:3] == [str(len(new_rows)), str(users_of(new_rows))]
    for page in (fl["group"], fl["reports"]):
        for k, v in flt.items():
            assert f"{k}={v}" in page["hash"], page
        assert "9.0.0" in page["summary"] and flt["from"] in page["summary"]
    assert (fl["group"]["reports"], fl["group"]["users"]) == (str(len(new_rows)),
                                                              str(users_of(new_rows)))
    assert (fl["reports"]["reports"], fl["reports"]["users"]) == (str(len(new_rows)),
                                                                  str(users_of(new_rows)))
    (subrow,) = [s for s in fl["group"]["subgroups"] if s["key"] == sub["key"]]
    assert cells(subrow["text"])[1:3] == [str(len(new_rows)), str(users_of(new_rows))]
    assert sorted(int(r["key"]) for r in fl["reports"]["rows"]) == sorted(new_ids)
    # The sparkline spans the ten chosen days.
    assert fl["group"]["spark"] == {"from": flt["from"], "to": flt["to"], "days": 10}
    # A report opened from there leads back to the same filtered pages.
    assert len(fl["crumbs"]) == 3 and all("version=9.0.0" in c for c in fl["crumbs"]), fl["crumbs"]
    assert "version=9.0.0" in fl["back"]["hash"] and fl["back"]["version"] == "9.0.0"

    # Unfiltered drill-down: all-time numbers; the sparkline spans the days
    # with reports (today only), widened to a week.
    g = seen["group"]
    assert (g["reports"], g["users"]) == (str(len(deep_rows)), str(users_of(deep_rows)))
    assert g["spark"] == {"from": str(today - timedelta(days=6)), "to": str(today), "days": 7}
    assert "All-time" in g["summary"] and "?" not in g["hash"]
    (subrow,) = [s for s in g["subgroups"] if s["key"] == sub["key"]]
    for identity in want[:4]:
        assert identity in subrow["text"]
    # The call tree's icicle draws every node of the API's tree, each by
    # its path of frames from the root, under one bar for all the reports
    # (SPEC §10.4).
    tree = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{group['key']}/tree",
                          token=token).json
    drawn = [{"path": [], "count": tree["reports"], "self": 0}]

    def walk(children, path):
        for c in children:
            drawn.append({"path": path + [c["frame"]], "count": c["count"], "self": c["self"]})
            walk(c["children"], path + [c["frame"]])
    walk(tree["root"]["children"], [])
    key = lambda n: (json.dumps(n["path"]), n["count"], n["self"])
    assert tree["reports"] == len(deep_rows)
    assert sorted(map(key, g["flame"])) == sorted(map(key, drawn))
    # Its reports, the hostile user id shown as text, not markup, each
    # received time in UTC although the browser's zone is Los Angeles.
    assert {r["id"] for r in seen["reports"]} == {str(i) for i in deep_ids}
    assert any(HOSTILE_USER in r["text"] for r in seen["reports"])
    api_reports = server.request(
        "GET", f"/api/v1/apps/{app['app']}/groups/{group['key']}/{sub['key']}/reports",
        token=token).json["reports"]
    for r in api_reports:
        (shown,) = [x for x in seen["reports"] if x["id"] == str(r["id"])]
        assert cells(shown["text"])[0] == utc_text(r["received_at"]), (shown, r)
    # The stack: every function of every inline chain, innermost first,
    # with its file and line, as llvm-symbolizer gives them.
    assert seen["report"]["hash"] == f"#/reports/{deep_ids[0]}"
    text = seen["report"]["text"]
    at = 0
    for chain in chains:
        for function, file, line in chain:
            where = text.find(function, at)
            assert where >= 0, (function, text)
            at = where + len(function)
            assert f"{Path(file).name}:{line}" in text, (file, line)
    assert len(seen["report"]["representative_frames"]) == len(deep)
    one = server.request("GET", f"/api/v1/reports/{deep_ids[0]}", token=token).json
    assert seen["report"]["received"] == utc_text(one["received_at"])
    # The system library is marked, the app's own images are not.
    assert [t.split()[0] for t in seen["report"]["system_images"]] == [UIKIT]
    assert sorted(seen["report"]["app_images"]) == sorted([image.name, APP_FRAMEWORK])
    # A report without samples offers no trace (it would be an invented
    # span); test_dashboard_issue42.py downloads a sampled one's.
    assert not one["has_samples"] and seen["trace"] == {"offered": False}
    # Missing dSYMs: the app's images, the one in two reports first, a
    # page and then the rest after "More"; the system one apart.
    app_rows = seen["missing"]["app"]
    assert len(seen["missing"]["first_page"]) == MISSING_PAGE
    assert app_rows[0]["uuid"].upper() == absent and "AbsentKit" in app_rows[0]["text"]
    assert cells(app_rows[0]["text"])[3] == "2"
    assert sorted(m["uuid"].upper() for m in app_rows) == sorted([absent] + plugins)
    assert [m["uuid"].upper() for m in seen["missing"]["system"]] == [kernel]
    # The whitelist changes reached the database.
    assert seen["whitelist"] == ["vip-1"]
    listed = server.request("GET", f"/api/v1/apps/{app['app']}/whitelist",
                            token=token).json["whitelist"]
    assert [(w["user_id"], w["note"]) for w in listed] == [("vip-1", "added from the dashboard")]
    # The config change reached the database, and only the field changed.
    config = server.request("GET", f"/api/v1/apps/{app['app']}/config", token=token).json
    assert config["sample_rate"] == 0.25 and config["daily_quota"] == 100000, config
    assert "sample rate" in seen["config"]["status"]
    assert seen["reload"]["frames"] == len(deep)
    assert seen["bad_token"]["signin_visible"] and seen["bad_token"]["error"].strip()


def test_dashboard_on_the_demo_data(server, db, tmp_path):
    """What `make run` shows a newcomer: `stallscope demo` fills an app over
    HTTP, then the browser signs in, opens the top group down to a stack,
    and again from a list filtered to an older version; each page must show
    what the API answers for the same filters, and none scrolls sideways."""
    app = create_app(db)
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps(app))
    base = f"http://127.0.0.1:{server.port}"
    stallscope("demo", "--url", base, "--keys", str(keys))
    token = app["admin_token"]

    def api(path, **query):
        qs = "&".join(f"{k}={v}" for k, v in query.items())
        r = server.request("GET", f"/api/v1/apps/{app['app']}{path}" + (f"?{qs}" if qs else ""),
                           token=token)
        assert r.status == 200, (path, r)
        return r.json

    versions = [v["value"] for v in api("/dimensions")["versions"]]
    assert len(versions) >= 3, versions
    older = versions[1]
    seen = run_browser("demo.mjs", {"url": base, "app": app["app"], "token": token,
                                    "version": older}, tmp_path)

    assert not seen["page_errors"] and not seen["console_errors"], seen
    assert not seen["failed_requests"], seen["failed_requests"]
    assert len(seen["overflow"]) == 9
    for m in seen["overflow"]:
        assert m["client_width"] == 1280 and m["scroll_width"] <= 1280, m
    assert seen["versions"] == [""] + versions

    def plain(text):
        return text.replace(",", "")

    for walk, flt in [(seen["all"], {}), (seen["filtered"], {"version": older})]:
        # The dashboard lists by total stall time (the API's default is count).
        groups = api("/groups", level=1, limit=50, sort="stall_ms", **flt)["groups"]
        assert len(groups) >= (20 if not flt else 1)
        top = groups[0]
        assert [r["key"] for r in walk["groups"]] == [g["key"] for g in groups]
        # One axis for the whole list: its first to last day with reports.
        days = sorted(d["day"] for g in groups for d in g["daily"] if d["reports"] > 0)
        first, last = date.fromisoformat(days[0]), date.fromisoformat(days[-1])
        first = min(first, last - timedelta(days=6))
        axis = {"from": str(first), "to": str(last), "days": (last - first).days + 1}
        assert walk["sparks"] == [axis] * len(groups), walk["sparks"][:3]
        assert [plain(c) for c in cells(walk["groups"][0]["text"])[1:3]] == \
            [str(top["reports"]), str(top["users"])]
        detail = api(f"/groups/{top['key']}", **flt)
        g = walk["group"]
        assert (plain(g["reports"]), plain(g["users"])) == (str(detail["group"]["reports"]),
                                                            str(detail["group"]["users"]))
        for k, v in flt.items():
            assert f"{k}={v}" in g["hash"]
        sub = detail["subgroups"][0]
        assert g["subgroups"][0]["key"] == sub["key"]
        reports = api(f"/groups/{top['key']}/{sub['key']}/reports", limit=50, **flt)["reports"]
        assert [int(r["key"]) for r in walk["reports"]] == [r["id"] for r in reports]
        if flt:
            assert {r["app_version"] for r in reports} == {older}
        # The stack view: the representative stack's functions in order,
        # with file:line where the API has them.
        api_report = server.request("GET", f"/api/v1/reports/{reports[0]['id']}",
                                          token=token).json
        assert walk["report"]["hash"].startswith(f"#/reports/{api_report['id']}")
        shown = walk["report"]["representative_frames"]
        assert len(shown) == len(api_report["stack"]["frames"])
        lines = 0
        for text, frame in zip(shown, api_report["stack"]["frames"]):
            for s in frame.get("frames", []):
                assert s["function"] in text, (s, text)
                if s.get("file") and s.get("line"):
                    assert f"{s['file']}:{s['line']}" in text
                    lines += 1
        assert lines > 0
    missing = seen["missing"]
    assert [m["key"] for m in missing["app"]] == \
        [m["uuid"] for m in api("/dsyms/missing", images="app", limit=50)["missing"]]
    assert [m["key"] for m in missing["system"]] == \
        [m["uuid"] for m in api("/dsyms/missing", images="system", limit=50)["missing"]]
    assert missing["app"], "the demo has app images without a dSYM"
