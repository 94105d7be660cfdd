"""Issue 26 §5, SPEC §10.4: GET …/groups/{key1}/tree, the call tree of the
representative stacks of a group's retained reports, outermost frame at
the root: counts and `self` for stacks sharing prefixes, inline frames as
nodes of their own, the filters, the fold of more than 100 children into
"(other)", the depth cap, 404 and auth.

The expected trees are built here from the stacks the test posts and
llvm-symbolizer's inline chains (ingest_util.symbolize), never from the
server."""

import datetime
import uuid as uuidlib

import pytest

from conftest import create_app, fixture_of
from ingest_util import Image, allow_everyone, fresh_id, native, post, symbolize

PLUGIN = ("/private/var/containers/Bundle/Application/5D1C/Demo.app/Frameworks/"
          "Plugin.framework/Plugin", 0x1c0000000)
MAX_DEPTH, MAX_CHILDREN = 256, 100


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


class Stacks:
    """Builds reports of IMAGE (symbolized: its dSYM is uploaded) and of
    PLUGIN (no symbols) and the identities each frame stands for."""

    def __init__(self, image):
        self.image = image
        self.chains = {}

    def chain(self, addr):
        if addr not in self.chains:
            self.chains[addr] = symbolize(self.image.dwarf, [addr])[0]
        return self.chains[addr]

    def report(self, stack, user="u-1", **extra):
        """STACK: innermost first, each an IMAGE file address or ("plugin",
        offset)."""
        r = native(fresh_id(), self.image, [], user=user, **extra)
        r["images"].append({"name": PLUGIN[0], "uuid": str(uuidlib.uuid4()).upper(),
                            "arch": "arm64", "load_address": hex(PLUGIN[1]),
                            "size": 0x1000000})
        r["threads"][0]["frames"] = [
            hex(PLUGIN[1] + f[1]) if isinstance(f, tuple) else hex(self.image.runtime(f, i))
            for i, f in enumerate(stack)]
        return r

    def path(self, stack):
        """The identities of STACK outermost first, each (frame, function,
        file, line, image)."""
        ids = []
        for f in stack:
            if isinstance(f, tuple):
                ids.append((f"Plugin+{hex(f[1])}", None, None, None, PLUGIN[0]))
            else:
                ids += [(f"{self.image.name}!{fn}", fn, file or None, line or None,
                         self.image.name) for fn, file, line in self.chain(f)]
        return list(reversed(ids))


def expected(paths):
    """The tree of PATHS, as nested dicts by frame."""
    root = {"children": {}}
    for path in paths:
        node = root
        for info in path[:MAX_DEPTH]:
            node = node["children"].setdefault(
                info[0], {"infos": set(), "count": 0, "self": 0, "children": {}})
            node["count"] += 1
            node["infos"].add(info[1:])
        if path and len(path) <= MAX_DEPTH:
            node["self"] += 1
    return root


def check(got, want):
    """GOT's children (the server's list) against WANT's (by frame): sorted
    by count then frame, past 100 the rest folded into "(other)"."""
    rows = sorted(want["children"].items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    other = None
    if len(rows) > MAX_CHILDREN:
        rest = rows[MAX_CHILDREN - 1:]
        rows = rows[:MAX_CHILDREN - 1]
        other = {"count": sum(n["count"] for _, n in rest),
                 "self": sum(n["self"] for _, n in rest)}
    shown = [(frame, n["count"], n["self"]) for frame, n in rows]
    if other:
        shown = sorted(shown + [("(other)", other["count"], other["self"])],
                       key=lambda t: (-t[1], t[0]))
    assert [(c["frame"], c["count"], c["self"]) for c in got["children"]] == shown
    for c in got["children"]:
        if c["frame"] == "(other)":
            assert c["children"] == [] and c["function"] is None
            continue
        node = want["children"][c["frame"]]
        functions = {i[0] for i in node["infos"]}
        assert {c["function"]} == functions and {c["image"]} == {i[3] for i in node["infos"]}
        if len(node["infos"]) == 1:
            (function, file, line, _), = node["infos"]
            assert (c["file"], c["line"]) == (file, line)
        check(c, node)


def tree(server, app, key1, query="", token=None):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{key1}/tree{query}",
                       token=token or app["admin_token"])
    assert r.status == 200, r
    # How current it is (SPEC §12), whose value test_read_replica.py checks.
    assert r.json.pop("as_of"), r
    return r.json


def ingest_all(server, app, reports):
    r = post(server, app, "/api/v1/ingest", {"reports": reports})
    assert r.status == 202 and not r.json["rejected"], r
    return [a["id"] for a in r.json["accepted"]]


def one_group(server, app):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?level=1",
                       token=app["admin_token"])
    (g,) = r.json["groups"]
    return g


@pytest.fixture
def setup(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    return app, Stacks(image)


def shared_prefix_stacks(image):
    """Stacks of one level-1 group (their innermost frame has an inline
    chain of two or more, which keys it) sharing outer frames."""
    x = image.inlined[0]
    f = image.by_function
    return x, [[x, f[1], f[2]], [x, f[1], f[2]], [x, f[3], f[2]], [x, f[1], f[5]],
               [x], [x, f[2]], [x, ("plugin", 0x40), f[2]]]


def test_counts_and_self_for_shared_prefixes_and_inline_frames(server, setup, image):
    app, st = setup
    x, stacks = shared_prefix_stacks(image)
    assert len(st.chain(x)) >= 2
    ingest_all(server, app, [st.report(s) for s in stacks])
    got = tree(server, app, one_group(server, app)["key"])
    assert got["reports"] == len(stacks)
    want = expected([st.path(s) for s in stacks])
    check(got["root"], want)
    # x's inline chain is nodes of their own: the one-frame stack [x] ends
    # at the innermost entry, a child of the function it was inlined into.
    outer, inner = st.path([x])[-2:]
    node = next(c for c in got["root"]["children"] if c["frame"] == outer[0])
    leaf = next(c for c in node["children"] if c["frame"] == inner[0])
    assert leaf["self"] >= 1 and leaf["function"] == inner[1] != outer[1]


def test_filters_version_days_and_level2(server, setup, image):
    app, st = setup
    x, stacks = shared_prefix_stacks(image)
    versions = ["9.0" if i % 2 else "8.0.1" for i in range(len(stacks))]
    ingest_all(server, app, [st.report(s, app_version=v) for s, v in zip(stacks, versions)])
    key1 = one_group(server, app)["key"]
    got = tree(server, app, key1, "?version=9.0")
    kept = [s for s, v in zip(stacks, versions) if v == "9.0"]
    assert got["reports"] == len(kept)
    check(got["root"], expected([st.path(s) for s in kept]))

    today = datetime.datetime.now(datetime.timezone.utc).date()
    got = tree(server, app, key1, f"?from={today}&to={today}")
    assert got["reports"] == len(stacks)
    check(got["root"], expected([st.path(s) for s in stacks]))
    later = today + datetime.timedelta(days=1)
    assert tree(server, app, key1, f"?from={later}") == {"reports": 0, "root": {"children": []}}

    # A level-2 group: the reports whose innermost four identities are its
    # frames.
    detail = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{key1}",
                            token=app["admin_token"]).json
    for sub in detail["subgroups"]:
        kept = [s for s in stacks
                if [p[0] for p in reversed(st.path(s))][:4] == sub["frames"]]
        assert kept
        got = tree(server, app, key1, f"?level2={sub['key']}")
        assert got["reports"] == len(kept) == sub["reports"]
        check(got["root"], expected([st.path(s) for s in kept]))


def test_more_than_100_children_fold_into_other(server, setup, image):
    app, st = setup
    x = image.inlined[0]
    # 130 distinct outermost frames; the first ten twice, so the counts
    # order them; equal counts order by frame.
    stacks = [[x, ("plugin", 0x10 * (i + 1))] for i in range(130)]
    stacks += stacks[:10]
    ingest_all(server, app, [st.report(s) for s in stacks])
    got = tree(server, app, one_group(server, app)["key"])
    assert got["reports"] == len(stacks)
    assert len(got["root"]["children"]) == MAX_CHILDREN
    other = [c for c in got["root"]["children"] if c["frame"] == "(other)"]
    assert len(other) == 1 and other[0]["count"] == 130 + 10 - 10 * 2 - 89
    check(got["root"], expected([st.path(s) for s in stacks]))


def test_depth_capped_at_256(server, setup, image):
    app, st = setup
    x = image.inlined[0]
    deep = [x] + [("plugin", 0x8 * (i + 1)) for i in range(300)]
    ingest_all(server, app, [st.report(deep), st.report([x, ("plugin", 0x8)])])
    got = tree(server, app, one_group(server, app)["key"])
    check(got["root"], expected([st.path(deep), st.path([x, ("plugin", 0x8)])]))
    # The deep stack's path has no branch: it ends at depth 256, cut, so
    # no node holds its self.
    node = next(c for c in got["root"]["children"] if c["frame"] == st.path(deep)[0][0])
    depth = 1
    while node["children"]:
        (node,) = node["children"]
        depth += 1
    assert depth == MAX_DEPTH and node["self"] == 0 and node["count"] == 1


def test_unknown_group_and_auth(server, db, setup):
    app, st = setup
    assert server.request("GET", f"/api/v1/apps/{app['app']}/groups/0123456789abcdef/tree",
                          token=app["admin_token"]).status == 404
    other = create_app(db)
    path = f"/api/v1/apps/{app['app']}/groups/0123456789abcdef/tree"
    assert server.request("GET", path).status == 401
    assert server.request("GET", path, token=other["admin_token"]).status == 403
    assert server.request("GET", path, token=app["upload_token"]).status in (401, 403)


def test_representative_stack_from_samples(server, setup, image):
    """A report with samples is represented by their heaviest stack, which
    it stores inline rather than as a thread."""
    app, st = setup
    x, stacks = shared_prefix_stacks(image)
    heavy, light, main = stacks[0], stacks[2], stacks[3]
    r = st.report(main)
    frames = lambda s: st.report(s)["threads"][0]["frames"]
    # The heaviest: the most samples with the same innermost frame.
    r["samples"] = [{"t_ms": 0, "frames": frames(heavy)},
                    {"t_ms": 50, "frames": frames([image.by_function[4]])},
                    {"t_ms": 100, "frames": frames(heavy)}]
    ingest_all(server, app, [r, st.report(light)])
    got = tree(server, app, one_group(server, app)["key"])
    assert got["reports"] == 2
    check(got["root"], expected([st.path(heavy), st.path(light)]))


def test_node_budget_keeps_counts_exact(server, setup, image):
    """Past 65,536 nodes a stack's new frames go to its parent's "(other)";
    frames already in the tree keep counting, so every count stays exact."""
    app, st = setup
    x = image.inlined[0]
    n, per = 300, 298   # 300 cut paths of 256 nodes: more than the budget
    stacks = [[x] + [("plugin", 0x10 + 4 * (j * per + m)) for m in range(per)]
              + [("plugin", 0x8)] for j in range(n)]
    ingest_all(server, app, [st.report(s) for s in stacks])
    got = tree(server, app, one_group(server, app)["key"])
    assert got["reports"] == n
    (shared,) = got["root"]["children"]
    assert (shared["frame"], shared["count"], shared["self"]) == ("Plugin+0x8", n, 0)
    children = shared["children"]
    assert len(children) == MAX_CHILDREN
    other = [c for c in children if c["frame"] == "(other)"]
    assert len(other) == 1 and other[0]["count"] == n - (MAX_CHILDREN - 1)
    real = [c for c in children if c["frame"] != "(other)"]
    assert [c["frame"] for c in real] == sorted(c["frame"] for c in real)
    for c in real:
        depth, node = 2, c
        while node["children"]:
            (node,) = node["children"]
            depth += 1
            assert node["count"] == 1
        assert depth == MAX_DEPTH and node["self"] == 0
