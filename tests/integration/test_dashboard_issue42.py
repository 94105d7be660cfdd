"""The dashboard's part of issue 42 in headless Chromium, against the real
server and PostgreSQL; tests/browser/issue42.mjs does the clicking.

test_issue42_defects: a group's flame graph under a device filter counts
what its header counts, the top navigation and the overview's and
comparison's forms keep the filters, versions list newest first in the
version order (SPEC §10.3), the missing dSYMs read at a phone's width with
their app versions, a trace is offered only with samples, the stack names
images by file name, groups of one culprit are told apart and gathered,
tabs are titled by culprit and app.

test_issue42_new_api_views: the views of the API members and routes issue
42 added (percentiles and rate_basis, …/breakdown, ?q=,
…/reports?user_id=, hang_free_users and adoption, the comparison's
reports, stall time, p_value and diff_ci), each showing what the API
answers."""

import json
import urllib.parse
import uuid as uuidlib
from datetime import datetime, timezone

import pytest

from conftest import create_app, fixture_of
from ingest_util import LOAD, Image, allow_everyone, fresh_id, native, post
from test_culprit import KERNEL, stall
from test_dashboard import image_entry, run_browser, utc_text, version_key

ABSENT_PATH = ("/private/var/containers/Bundle/Application/3F2504E0-4F89-11D3-9A0C-0305E82C3301"
               "/Demo.app/Frameworks/AbsentRenderingKit.framework/AbsentRenderingKit")
VERSIONS = {"2.9": 3, "2.10": 1, "2.11": 1}  # as text 2.9 sorts first; newest is 2.11
# Filters neither the overview's nor the comparison's form sets.
OTHER_FILTERS = {"version": "2.9", "os_version": "17.2", "device": "iPad13,1", "kind": "stall"}


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


class Data:
    """What was posted: report ids by name, group keys by name."""

    def __init__(self, server, app, image):
        self.server, self.app, self.image = server, app, image
        self.ids, self.keys = {}, {}

    def send(self, name, body):
        r = post(self.server, self.app, "/api/v1/ingest", body)
        assert r.status == 202, r
        rid = r.json["accepted"][0]["id"]
        self.ids.setdefault(name, []).append(rid)
        key = self.api(f"/api/v1/reports/{rid}")["key1"]
        assert self.keys.setdefault(name, key) == key, name
        return rid

    def api(self, path, **query):
        qs = urllib.parse.urlencode(query)
        r = self.server.request("GET", path + (f"?{qs}" if qs else ""), token=self.app["admin_token"])
        assert r.status == 200, (path, r)
        return r.json

    def app_api(self, path, **query):
        return self.api(f"/api/v1/apps/{self.app['app']}{path}", **query)


def post_everything(server, app, image):
    d = Data(server, app, image)
    f = image.by_function
    # One group on two devices and three versions.
    devices = ["iPhone14,2"] * 3 + ["iPad13,1"] * 2
    versions = [v for v, n in VERSIONS.items() for _ in range(n)]
    for i, (dev, ver) in enumerate(zip(devices, versions)):
        d.send("dev", native(fresh_id(), image, [f[11], f[12]], user=f"u{i}", device=dev,
                             app_version=ver, duration_ms=1000 * (i + 1)))
    # One report with samples (its trace is offered), from one user.
    stack = [f[13], f[14]]
    addrs = [hex(image.runtime(a, i)) for i, a in enumerate(stack)]
    d.send("sampled", native(fresh_id(), image, stack, user="sam",
                             samples=[{"t_ms": 0, "frames": addrs}, {"t_ms": 50, "frames": addrs}]))
    # Two groups of one culprit: a system wait at two offsets innermost.
    for _ in range(2):
        d.send("dupA", stall(image, [(KERNEL, 0x1234)], [f[16], f[17]], user="sam"))
    d.send("dupB", stall(image, [(KERNEL, 0x2468)], [f[16], f[17]], user="ula"))
    # A frame in an app image nobody uploaded symbols for.
    absent = str(uuidlib.uuid4()).upper()
    waiting = native(fresh_id(), image, [f[5]], user="sam")
    waiting["images"].append(image_entry(ABSENT_PATH, LOAD + 0x10000000, absent))
    waiting["threads"][0]["frames"].append(hex(LOAD + 0x10000000 + 0x2000))
    d.send("waiting", waiting)
    d.missing_uuid = absent
    return d


@pytest.fixture
def posted(db, server, image):
    app = create_app(db)
    assert server.upload(app, image.dwarf).status in (200, 201)
    allow_everyone(server, app)
    return app, post_everything(server, app, image)


def scenario(server, app, **more):
    return {"url": f"http://127.0.0.1:{server.port}", "app": app["app"],
            "token": app["admin_token"], **more}


def clean(seen, server, app):
    assert not seen["page_errors"] and not seen["console_errors"], seen
    assert not seen["failed_requests"], seen["failed_requests"]
    for m in seen["overflow"]:
        assert m["scroll_width"] <= m["client_width"], m


def test_issue42_defects(server, posted, tmp_path):
    app, d = posted
    keys = d.keys
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    sam = d.api(f"/api/v1/reports/{d.ids['sampled'][0]}")
    day = sam["received_at"][:10]
    device_hash = f"#/groups/{keys['dev']}?device=iPad13%2C1"
    filtered = {"from": day, "to": day, "version": "2.9", "device": "iPhone14,2"}
    seen = run_browser("issue42.mjs", scenario(
        server, app, part="a", device_hash=device_hash,
        filtered_list_hash="#/groups?" + urllib.parse.urlencode(filtered),
        range_hash="#/groups?" + urllib.parse.urlencode({"from": day, "to": today}),
        unsampled_id=str(d.ids["dupA"][0]), sampled_id=str(d.ids["sampled"][0]),
        missing_uuid=d.missing_uuid, form_day=day,
        overview_hash="#/overview?" + urllib.parse.urlencode(OTHER_FILTERS),
        compare_form_hash="#/compare?" + urllib.parse.urlencode(
            {"base": "2.9", "target": "2.10", **OTHER_FILTERS})), tmp_path)
    clean(seen, server, app)

    # A1: the tree follows the device filter; its root counts the header's.
    fl = seen["device_flame"]
    assert fl["header_reports"] == "2" and fl["root_count"] == 2, fl
    assert fl["tree_requests"] and all("device=iPad13%2C1" in u for u in fl["tree_requests"]), fl
    # A7: the tab is titled by the culprit, then the app.
    detail = d.app_api(f"/groups/{keys['dev']}")["group"]
    c = detail["culprit"]
    assert fl["title"] == f"{c['function'] or c['frame']} · {app['app']} · stallscope", fl["title"]
    assert seen["nav"]["list_title"] == f"Stall groups · {app['app']} · stallscope"

    # A2: every nav link carries the filters, and following them keeps them.
    nav = seen["nav"]
    for id_, href in nav["hrefs"].items():
        q = urllib.parse.parse_qs(href.split("?", 1)[1])
        assert {k: v[0] for k, v in q.items()} == filtered, (id_, href)
    for h in (nav["overview_hash"], nav["back_hash"]):
        q = urllib.parse.parse_qs(h.split("?", 1)[1])
        assert {k: v[0] for k, v in q.items()} == filtered, h
    assert nav["device_chosen"] == "iPhone14,2"
    # Task 3: Apply on the overview and Compare on the comparison change
    # their own fields and keep the page's other filters.
    forms = {k: {a: b[0] for a, b in urllib.parse.parse_qs(v.split("?", 1)[1]).items()}
             for k, v in seen["forms"].items()}
    assert seen["forms"]["overview"].startswith("#/overview?"), seen["forms"]
    assert forms["overview"] == {**OTHER_FILTERS, "from": day}, forms
    assert seen["forms"]["compare"].startswith("#/compare?"), seen["forms"]
    assert forms["compare"] == {"base": "2.9", "target": "2.10", **OTHER_FILTERS, "from": day}, forms
    # A2: versions newest first in the version order, not the API's.
    listed = seen["versions"][1:]
    dims = d.app_api("/dimensions", **{"from": day, "to": today})
    want = sorted((x["value"] for x in dims["versions"]), key=version_key, reverse=True)
    assert listed == want and listed[:3] == ["8.0.1", "2.11", "2.10"], listed
    assert [x["value"] for x in dims["versions"]] != want, "the data cannot tell the orders apart"

    # A4: no trace without samples; the sampled report's is the API's.
    assert seen["report"]["trace_offered"] is False
    trace = d.api(f"/api/v1/reports/{d.ids['sampled'][0]}/trace")
    assert seen["sampled"]["json"] == trace
    # A5: every frame names its image by its file name, the path on hover.
    images = seen["report"]["images"]
    assert images and all("/" not in i["text"] for i in images), images
    assert {i["text"] for i in images} >= {"libsystem_kernel.dylib", d.image.name.rsplit("/", 1)[-1]}
    assert any(i["title"] == KERNEL[0] for i in images), images
    assert seen["report"]["title"] == f"Report {d.ids['dupA'][0]} · {app['app']} · stallscope"

    # A6: the two groups of one culprit say their innermost frames apart,
    # and the by-culprit view gathers them with their sums.
    dups = seen["dups"]
    rows = {r["key"]: r for r in dups["rows"]}
    a, b = rows[keys["dupA"]], rows[keys["dupB"]]
    assert a["culprit"] == b["culprit"] is not None
    api_groups = {g["key"]: g for g in d.app_api("/groups", limit=50)["groups"]}
    assert a["innermost"] == api_groups[keys["dupA"]]["frames"][0] != b["innermost"]
    assert b["innermost"] == api_groups[keys["dupB"]]["frames"][0]
    assert "by=culprit" in dups["hash"] and "loaded" in dups["note"]
    (both,) = [g for g in dups["gathered"] if g["groups"] == 2]
    assert sorted(x["key"] for x in both["links"]) == sorted([keys["dupA"], keys["dupB"]])
    pair = [api_groups[keys["dupA"]], api_groups[keys["dupB"]]]
    # Groups, reports summed, users the largest of the two.
    assert both["cells"][:3] == ["2", str(sum(x["reports"] for x in pair)),
                                 str(max(x["users"] for x in pair))] == ["2", "3", "1"], both
    assert len(dups["gathered"]) == len(api_groups) - 1

    # A3: the missing image by its file name, the path on hover; its UUID
    # whole and inside a phone's width; last seen as every time reads.
    m = seen["missing"]
    assert not m["table_scrolls"] and m["overflow"]["scroll_width"] <= 390, m
    assert m["uuid"]["text"] == m["uuid"]["title"] == d.missing_uuid
    assert m["uuid"]["right"] <= 390 and m["uuid"]["scroll"] <= m["uuid"]["client"] + 1, m["uuid"]
    assert m["image"] == {"text": ABSENT_PATH.rsplit("/", 1)[-1], "title": ABSENT_PATH}, m["image"]
    row = [x for x in d.app_api("/dsyms/missing", images="app")["missing"]
           if x["uuid"].upper() == d.missing_uuid][0]
    ls = row["last_seen"]
    assert m["last_seen"] == (ls if len(ls) == 10 else utc_text(ls)), (m["last_seen"], ls)
    # Its app versions, newest first, in a column of their own.
    assert "App versions" in m["heads"], m["heads"]
    assert row["app_versions"] == ["8.0.1"] and m["versions"] == ", ".join(row["app_versions"]), m


def check_in(server, app, user, **dims):
    """A sampling check-in of USER that says DIMS (app_version, device)."""
    q = urllib.parse.urlencode({"user_id": user, **dims})
    r = server.request("GET", f"/api/v1/sampling?{q}", key=app["ingest_key"])
    assert r.status == 200, r


def duration_text(ms):
    """lib-format.js duration()."""
    if ms is None:
        return "—"
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.{2 if ms < 10000 else 1}f} s"


def stall_text(ms):
    """lib-triage.js stallTime()."""
    if ms is None or ms < 60000:
        return duration_text(ms)
    return f"{ms / 60000:.1f} min" if ms < 3600000 else f"{ms / 3600000:.1f} h"


def number(text):
    """A number a data attribute carries ('' for null), as the API's."""
    return None if text == "" else float(text)


def test_issue42_new_api_views(server, posted, tmp_path):
    app, d = posted
    keys = d.keys
    # One check-in that says its device, none its OS version: under a
    # device filter the rate is divided by that device's users (rate_basis
    # "filtered"), under an OS version filter by every device's.
    check_in(server, app, "u0", app_version="2.9", device="iPhone14,2")
    # The user-reports route lists a user's reports newest first.
    sam_reports = d.app_api("/reports", user_id="sam")["reports"]
    detail = d.app_api(f"/groups/{keys['dev']}", os_version="17.2")["group"]
    breakdown = d.app_api(f"/groups/{keys['dev']}/breakdown", os_version="17.2")
    # The culprit's bare name ("describe" of "geo::describe(double)").
    culprit = d.app_api(f"/groups/{keys['dupA']}")["group"]["culprit"]["function"]
    search = culprit.split("(")[0].split("::")[-1]
    assert len(search) >= 3, culprit
    found = [g["key"] for g in d.app_api("/groups", level=1, q=search, sort="stall_ms",
                                          status="open,regressed", limit=50)["groups"]]
    stats = d.app_api("/stats")["days"]
    on_os = d.app_api("/groups", level=1, os_version="17.2", sort="stall_ms",
                      status="open,regressed", limit=50)["groups"]
    on_ipad = d.app_api(f"/groups/{keys['dev']}", device="iPad13,1")["group"]
    assert detail["rate_basis"] == "all_devices" and on_ipad["rate_basis"] == "filtered"
    seen = run_browser("issue42.mjs", scenario(
        server, app, part="b", group_hash=f"#/groups/{keys['dev']}?os_version=17.2",
        os_list_hash="#/groups?os_version=17.2",
        filtered_basis_hash=f"#/groups/{keys['dev']}?device=iPad13%2C1",
        unfiltered_hash=f"#/groups/{keys['dev']}",
        search=search, user="sam",
        compare_hash="#/compare?base=2.9&target=2.10&from=2000-01-01",
        compare_same_hash="#/compare?base=2.9&target=2.9"), tmp_path)
    clean(seen, server, app)

    # The group page under an OS version filter: percentiles, the rate with
    # its note (no check-in said an OS version), the breakdowns, a value's
    # link.
    g = seen["group"]
    assert g["percentiles"] == " · ".join(duration_text(detail[k]) for k in ("p50_ms", "p90_ms", "p99_ms")), g
    assert g["note"] == "÷ all devices’ users" and g["note"] in g["rate"], g
    assert set(g["breakdown"]) == set(breakdown["by"]) == {"app_version", "os_version", "device", "kind"}
    for dim, rows in breakdown["by"].items():
        assert [r["value"] for r in g["breakdown"][dim]] == [r["value"] for r in rows], dim
        assert [number(r["share"]) for r in g["breakdown"][dim]] == [r["share"] for r in rows], dim
        assert [c[1:] for c in (r["cells"] for r in g["breakdown"][dim])] == \
            [[str(r["reports"]), str(r["users"])] for r in rows], dim
    assert f"device={urllib.parse.quote(g['clicked_value'], safe='')}" in g["after_click"]

    # The note shows on every row under that filter, not under a device
    # filter (a check-in said a device), nor without a filter.
    basis = seen["basis"]
    assert [r["key"] for r in basis["list"]] == [x["key"] for x in on_os] and on_os
    for shown, x in zip(basis["list"], on_os):
        assert shown["basis"] == x["rate_basis"] == "all_devices", shown
        assert shown["note"] == "÷ all devices’ users", shown
    assert basis["filtered"] is None and basis["unfiltered"] is None, basis

    # The list: every group's percentiles as the API gives them; the search.
    listed = d.app_api("/groups", level=1, sort="stall_ms", status="open,regressed", limit=50)["groups"]
    assert [(r["key"], number(r["p50"]), number(r["p90"]), number(r["p99"]))
            for r in seen["list"]["rows"]] == \
        [(x["key"], x["p50_ms"], x["p90_ms"], x["p99_ms"]) for x in listed]
    assert seen["list"]["found"] == found and keys["dupA"] in found
    assert "q=" in seen["list"]["hash"] and seen["list"]["q_kept"] == search

    assert [r["id"] for r in seen["user"]] == [str(r["id"]) for r in sam_reports] and sam_reports
    assert all(r["href"] == f"#/reports/{r['id']}" for r in seen["user"])

    latest = {}
    for r in sorted(stats, key=lambda r: r["day"]):
        latest[r["version"]] = r
    assert {(r["version"], r["day"]) for r in seen["overview"]} == {(v, r["day"]) for v, r in latest.items()}
    for r in seen["overview"]:
        want = latest[r["version"]]
        assert number(r["hang_free"]) == want["hang_free_users"], r
        assert number(r["adoption"]) == want["adoption"], r

    # The comparison: the API's rows in its order, each titled by its
    # culprit, with both sides' rates, reports and stall time, the
    # difference with its CI and p; a click keeps the days and a version.
    rows = d.app_api("/compare", base="2.9", target="2.10", **{"from": "2000-01-01"})["groups"]
    cmp = seen["compare"]
    assert [r["key"] for r in cmp["rows"]] == [r["key"] for r in rows] and rows
    for shown, row in zip(cmp["rows"], rows):
        c = row["culprit"]
        assert shown["culprit"] == ((c["function"] or c["frame"]) if c else None), (shown, c)
        assert [number(x) for x in shown["rates"]] == [row["base"]["rate"], row["target"]["rate"]], shown
        assert number(shown["p_value"]) == row["p_value"], shown
        assert json.loads(shown["ci"]) == row["diff_ci"], shown
        assert shown["reports"] == [f"{row[s]['reports']} reports" for s in ("base", "target")], shown
        assert shown["stall"] == [stall_text(row[s]["stall_ms"]) for s in ("base", "target")], shown
        assert "95% CI" in shown["diff"] and "p " in shown["diff"], shown
        q = urllib.parse.parse_qs(shown["href"].split("?", 1)[1])
        assert q["from"] == ["2000-01-01"] and q["version"][0] in ("2.9", "2.10"), shown
    assert cmp["clicked"] == cmp["rows"][0]["href"], cmp["clicked"]
    # The first 200 rows (all of them here, so no "Load more") and the
    # server's tally of every verdict.
    assert "limit=200" in cmp["asked"] and cmp["more_hidden"], cmp
    tally = ", ".join(f"{sum(r['verdict'] == v for r in rows)} {v}"
                      for v in ("new", "worse", "better", "same"))
    assert tally in cmp["hint"], (tally, cmp["hint"])
    assert seen["compare_same"]["compare_requests"] == 0 and "2.9" in seen["compare_same"]["text"]
