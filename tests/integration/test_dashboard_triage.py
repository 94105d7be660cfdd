"""The dashboard's triage views (issue 26, SPEC §10) in headless Chromium
against the real server and PostgreSQL: the groups list sorted by stall
time, titled by culprit, with affected users, rate and p90; the release
comparison; a group's duration histogram and flame graph; the app
overview's stall rate per version and day. The data is posted here over
HTTP (check-ins, reports with durations, a backfilled day), and what the
pages must show is computed here from it, or, for what the API alone
decides (the call tree, the verdicts' order), is the API's answer to the
same query. tests/browser/triage.mjs does the clicking."""

import json
import re
import urllib.parse

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, allow_everyone, expected_frames, fresh_id, native, post
from test_dashboard import run_browser

NOON = 1795176000  # 2026-11-20T12:00:00Z, the server's now
TODAY, YESTERDAY = "2026-11-20", "2026-11-19"
OLD, BASE, TARGET = "2.9", "2.10", "2.11"  # in the version order; as text 2.9 is last
CHECKED_IN = [f"u{i:02d}" for i in range(60)]  # every one on BASE and on TARGET
VIP = "vip-tester"  # whitelisted: active, in no rate
EDGES = [0, 250, 500, 1000, 2000, 5000, 10000, 30000]


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def version_key(v):
    """SPEC §10.3: dot-separated parts of digit runs (numbers) and other
    runs (text, after numbers); what ends first comes first."""
    return [[(0, int(run)) if run.isdigit() else (1, run)
             for run in re.findall(r"[0-9]+|[^0-9]+", part)] for part in v.split(".")]


def histogram(durations):
    hist = [0] * len(EDGES)
    for d in durations:
        if d is not None:
            hist[max(i for i, e in enumerate(EDGES) if d >= e)] += 1
    return hist


def p90_bucket(hist):
    total, cum = sum(hist), 0
    for i, n in enumerate(hist):
        cum += n
        if total and cum * 10 >= total * 9:
            return i
    return -1


class Posted:
    """Every stored report as (group, user, version, day, duration)."""

    def __init__(self, server, app, image):
        self.server, self.app, self.image = server, app, image
        self.rows = []
        self.keys = {}

    def send(self, group, stack, user, version, duration, at=None):
        body = native(fresh_id(), self.image, stack, user=user, app_version=version)
        if duration is None:
            del body["duration_ms"]
        else:
            body["duration_ms"] = duration
        if at is None:
            r = post(self.server, self.app, "/api/v1/ingest", body)
        else:
            r = self.server.request(
                "POST", f"/api/v1/apps/{self.app['app']}/backfill?received_at="
                + urllib.parse.quote(at, safe=""), body=json.dumps(body).encode(),
                token=self.app["admin_token"])
        assert r.status == 202, r
        rid = r.json["accepted"][0]["id"]
        key = self.api(f"/api/v1/reports/{rid}")["key1"]
        assert self.keys.setdefault(group, key) == key, group
        self.rows.append((group, user, version, at[:10] if at else TODAY, duration))

    def api(self, path, **query):
        qs = urllib.parse.urlencode(query)
        r = self.server.request("GET", path + (f"?{qs}" if qs else ""),
                                token=self.app["admin_token"])
        assert r.status == 200, (path, r)
        return r.json

    def of(self, group):
        return [p for p in self.rows if p[0] == group]


def check_in(server, app, user, version):
    q = urllib.parse.urlencode({"user_id": user, "app_version": version})
    r = server.request("GET", f"/api/v1/sampling?{q}", key=app["ingest_key"])
    assert r.status == 200, r


def post_everything(server, app, image):
    """Five groups over three versions; returns what was posted."""
    bf = image.by_function
    inl = image.inlined[0]
    # The flame graph's group: stacks sharing outer frames, an inline
    # chain innermost, only in TARGET (so new in it).
    tree_stacks = [[inl, bf[11], bf[12], bf[13]], [inl, bf[14], bf[12], bf[13]],
                   [inl, bf[15], bf[13]]]
    stacks = {"same": [bf[16], bf[11]], "worse": [bf[17], bf[11]],
              "better": [bf[18], bf[11]], "old": [bf[19], bf[11]]}
    for user in CHECKED_IN:
        check_in(server, app, user, BASE)
        check_in(server, app, user, TARGET)
    check_in(server, app, VIP, TARGET)
    p = Posted(server, app, image)
    # TARGET seen first (a backfilled report this morning), so the order
    # of first appearance is not the version order.
    p.send("tree", tree_stacks[0], "u10", TARGET, 30000, at=f"{TODAY}T08:00:00Z")
    tree_durations = [45000, 250, 9999, 10000, 60000, None, 5000]
    for i, d in enumerate(tree_durations):
        p.send("tree", tree_stacks[(i + 1) % 3], f"u{11 + i:02d}", TARGET, d)
    # Every bucket edge and one report without a duration.
    same = [250, 499, 500, 1000, 1999, 2000, None, 4999, 5000, 10000, 29999, 30000]
    for i, d in enumerate(same):
        p.send("same", stacks["same"], f"u{i % 6:02d}", BASE if i < 6 else TARGET, d)
    for i in range(3):
        p.send("worse", stacks["worse"], f"u{40 + i}", BASE, 1200)
    for i in range(24):
        p.send("worse", stacks["worse"], f"u{i:02d}", TARGET, None if i % 8 == 0 else 1200)
    p.send("worse", stacks["worse"], VIP, TARGET, 1200)
    for i in range(24):
        p.send("better", stacks["better"], f"u{30 + i}", BASE, 800)
    for i in range(3):
        p.send("better", stacks["better"], f"u{i:02d}", TARGET, 800)
    for i in range(3):
        p.send("old", stacks["old"], f"u{50 + i}", OLD, 3000, at=f"{YESTERDAY}T12:00:00Z")
    assert len(set(p.keys.values())) == 5, p.keys
    culprits = {g: expected_frames(image, [s[0]])[0][0][0]
                for g, s in [("tree", tree_stacks[0])] + list(stacks.items())}
    return p, culprits


def expected_stats(p):
    """(day, version) → (active, sampled, stalled) from what was posted:
    everyone is sampled (rate 1) but the whitelisted user."""
    active = {(TODAY, BASE): set(CHECKED_IN), (TODAY, TARGET): set(CHECKED_IN) | {VIP}}
    stalled = {}
    for _, user, version, day, _ in p.rows:
        active.setdefault((day, version), set()).add(user)
        if user != VIP:
            stalled.setdefault((day, version), set()).add(user)
    return {k: (len(users), len(users - {VIP}), len(stalled.get(k, set())))
            for k, users in active.items()}


def flatten(children, path=()):
    """(path of frames from the outermost, count, self, children) of
    every node."""
    out = []
    for n in children:
        here = path + (n["frame"],)
        out.append((here, n["count"], n["self"], len(n.get("children", []))))
        out += flatten(n.get("children", []), here)
    return out


def test_triage_views(db, make_server, image, tmp_path):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    assert server.upload(app, image.dwarf).status in (200, 201)
    allow_everyone(server, app)
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/{VIP}", body=b"{}",
                       token=app["admin_token"])
    assert r.status == 200, r
    p, culprits = post_everything(server, app, image)
    keys = p.keys
    base = f"/api/v1/apps/{app['app']}"
    tree = p.api(f"{base}/groups/{keys['tree']}/tree")
    # The node to zoom into: one with the most children, deepest first.
    nodes = flatten(tree["root"]["children"])
    zoom = max(nodes, key=lambda n: (n[3], len(n[0])))
    assert zoom[3] >= 2, nodes
    key2 = p.api(f"{base}/groups/{keys['tree']}")["subgroups"][0]["key"]
    seen = run_browser("triage.mjs", {"url": f"http://127.0.0.1:{server.port}",
                                      "app": app["app"], "token": app["admin_token"],
                                      "tree_key": keys["tree"], "tree_key2": key2,
                                      "hist_key": keys["same"],
                                      "choose": {"base": OLD, "target": BASE},
                                      "zoom_path": list(zoom[0])}, tmp_path)
    assert not seen["page_errors"] and not seen["console_errors"], seen
    assert not seen["failed_requests"], seen["failed_requests"]

    # No view scrolls sideways, at 1280 px or at 390.
    assert {m["view"] for m in seen["overflow"]} == {"groups", "compare", "overview",
                                                     "group", "flame", "subgroup"}
    assert len(seen["phone"]) == 6
    for m in seen["overflow"] + seen["phone"]:
        assert m["client_width"] in (1280, 390) and m["scroll_width"] <= m["client_width"], m

    # The list: by total stall time (from the durations posted), each row
    # titled by its culprit, with affected user-days and p90 as posted.
    names = {v: k for k, v in keys.items()}
    stall = {g: sum(r[4] or 0 for r in p.of(g)) for g in keys}
    rows = seen["groups"]
    assert [names[r["key"]] for r in rows] == sorted(keys, key=lambda g: -stall[g])
    # Sorted by reports when the user picks it.
    by_count = sorted(keys, key=lambda g: -len(p.of(g)))
    assert [names[k] for k in seen["by_count"]] == by_count
    assert by_count != [names[r["key"]] for r in rows], "the data cannot tell the two sorts apart"
    api_groups = {g["key"]: g for g in p.api(f"{base}/groups", sort="stall_ms")["groups"]}
    for r in rows:
        g = names[r["key"]]
        durations = [x[4] for x in p.of(g)]
        assert int(r["stall_ms"]) == stall[g], r
        assert int(r["p90"]) == p90_bucket(histogram(durations)), r
        assert int(r["affected"]) == len({(x[1], x[3]) for x in p.of(g) if x[1] != VIP}), r
        assert (float(r["rate"]) if r["rate"] else None) == api_groups[r["key"]]["rate"], r
        assert r["title"].startswith(culprits[g]), (g, r)
        assert ("new in " + TARGET in r["text"]) == (g == "tree"), r

    # The comparison opens on the two newest versions by the version
    # order, and shows the API's rows for them, in its order.
    newest = sorted({x[2] for x in p.rows}, key=version_key, reverse=True)
    cmp = seen["compare"]
    assert (cmp["base"], cmp["target"]) == (newest[1], newest[0]) == (BASE, TARGET)
    answer = p.api(f"{base}/compare", base=BASE, target=TARGET)["groups"]
    assert [(r["key"], r["verdict"]) for r in cmp["rows"]] == \
        [(g["key"], g["verdict"]) for g in answer]
    for r, g in zip(cmp["rows"], answer):
        assert [float(x) if x else None for x in r["rates"]] == \
            [g["base"]["rate"], g["target"]["rate"]], (r, g)
    assert {names[r["key"]]: r["verdict"] for r in cmp["rows"]} == \
        {"tree": "new", "worse": "worse", "better": "better", "same": "same"}
    assert cmp["rows"][0]["verdict"] in ("new", "worse")
    # Each row opens its group at the version that has it.
    for r in cmp["rows"]:
        assert r["href"] == f"#/groups/{r['key']}?version={TARGET}", r
    # Two versions picked: the API's answer for those.
    chosen = seen["compare_chosen"]
    assert (chosen["base"], chosen["target"]) == (OLD, BASE)
    assert [(r["key"], r["verdict"]) for r in chosen["rows"]] == \
        [(g["key"], g["verdict"]) for g in p.api(f"{base}/compare", base=OLD, target=BASE)["groups"]]
    (old_row,) = [r for r in chosen["rows"] if names[r["key"]] == "old"]
    assert old_row["href"] == f"#/groups/{old_row['key']}?version={OLD}", old_row

    # The overview: every (day, version) with its users as posted, and the
    # chart's points at stalled ÷ sampled.
    want = expected_stats(p)
    assert {(r["day"], r["version"]): tuple(int(c.replace(",", "")) for c in r["cells"][:3])
            for r in seen["overview"]["rows"]} == want
    assert {(d["day"], d["version"]): float(d["rate"]) for d in seen["overview"]["dots"]} == \
        {k: v[2] / v[1] for k, v in want.items() if v[1]}
    assert seen["overview"]["legend"] == [TARGET, BASE, OLD]

    # The histogram's bars: the durations posted, as the API counts them.
    same = [x[4] for x in p.of("same")]
    detail = p.api(f"{base}/groups/{keys['same']}")["group"]
    assert seen["hist"] == histogram(same) == detail["duration_hist"]

    # The flame graph: one node per node of the API's tree, same counts;
    # zoomed into a node its children share the full width by count, and
    # a click on it zooms back out to its parent.
    fl = seen["flame"]
    assert sorted((tuple(json.loads(n["path"])), n["count"], n["self"]) for n in fl["nodes"]) == \
        sorted(n[:3] for n in nodes)
    assert fl["root_count"] == tree["reports"] == len(p.of("tree"))
    assert tuple(json.loads(fl["zoomed"]["focus"])) == zoom[0]
    kids = [n for n in fl["zoomed"]["nodes"] if tuple(json.loads(n["path"]))[:-1] == zoom[0]]
    assert len(kids) == zoom[3] and sum(n["count"] for n in kids) <= zoom[1]
    for n in kids:
        assert abs(n["width"] / fl["zoomed"]["graph_width"] - n["count"] / zoom[1]) < 0.01, n
    assert tuple(json.loads(fl["unzoomed_focus"])) == zoom[0][:-1]
    assert f"in {zoom[1]} reports" in fl["hover"], fl["hover"]
    # A subgroup's page draws the subgroup's own tree.
    sub_tree = p.api(f"{base}/groups/{keys['tree']}/tree", level2=key2)
    assert sub_tree["reports"] < tree["reports"]
    assert sorted((tuple(json.loads(n["path"])), n["count"], n["self"])
                  for n in seen["subgroup_flame"]) == \
        sorted(n[:3] for n in flatten(sub_tree["root"]["children"]))
