"""Issue 40, SPEC §3.6: Swift frames read as an iOS developer reads them,
everywhere a frame goes — the group list, the culprit, the call tree and
the report (its full form on demand) — from a real dSYM whose functions
carry Swift linkage names (tests/fixtures/src/swift_frames.c); a device's
Swift hint demangled the same way; a symcache of the previous format
rebuilt, never served; and `stallscope reprocess --all` moving the
reports stored under raw names into the groups of the short ones.

Expected names are this file's table (SPEC §3.6's rules), addresses come
from llvm-symbolizer's answers on the same file."""

import json
import struct

import pytest

from conftest import create_app, fixture_of, migrate, psql, stallscope
from ingest_util import Image, allow_everyone, fresh_id, native, post, report, symbolize

IMAGE = "libFeeds.dylib"
SHORT = {
    "$s5Feeds9FeedStoreC6sharedACvgZ": "static FeedStore.shared.getter",
    "$s5Feeds9FeedStoreC5itemsSaySSGvg": "FeedStore.items.getter",
    "$s5Feeds9FeedStoreC3urlAC10Foundation3URLV_tcfc": "FeedStore.init(url: URL)",
    "$s5Feeds18FeedViewControllerC6layout33_4A5F0B6E6F2E4C1D8E9A7B3C2D1E0F9ALLyyF":
        "FeedViewController.layout()",
    "$s5Feeds18FeedViewControllerC6reload8animatedySb_tFyyXEfU_":
        "closure #1 () in FeedViewController.reload(animated: Bool)",
    "$s5Feeds18FeedViewControllerC6reload8animatedySb_tF":
        "FeedViewController.reload(animated: Bool)",
    "$s5Feeds18FeedViewControllerC11viewDidLoadyyF": "FeedViewController.viewDidLoad()",
    "$s5Feeds18FeedViewControllerC11viewDidLoadyyFTo": "@objc FeedViewController.viewDidLoad()",
}
CLOSURE = "$s5Feeds18FeedViewControllerC6reload8animatedySb_tFyyXEfU_"
LAYOUT = "$s5Feeds18FeedViewControllerC6layout33_4A5F0B6E6F2E4C1D8E9A7B3C2D1E0F9ALLyyF"
RELOAD = "$s5Feeds18FeedViewControllerC6reload8animatedySb_tF"
DID_LOAD = "$s5Feeds18FeedViewControllerC11viewDidLoadyyF"
OBJC = "$s5Feeds18FeedViewControllerC11viewDidLoadyyFTo"
ITEMS = "$s5Feeds9FeedStoreC5itemsSaySSGvg"
SHARED = "$s5Feeds9FeedStoreC6sharedACvgZ"


@pytest.fixture(scope="module")
def feeds(manifest):
    return Image(fixture_of(manifest, "dwarf", role="swift", variant="swift-arm64-O2"))


@pytest.fixture(scope="module")
def where(feeds):
    """{linkage name: a file address in it, outside any inlined call};
    LAYOUT: an address in the closure inside the inlined layout()."""
    addrs = list(range(feeds.text, feeds.text + feeds.size, 4))
    out = {}
    for a, chain in zip(addrs, symbolize(feeds.dwarf, addrs)):
        names = [f for f, _, _ in chain]
        if len(names) == 1:
            out.setdefault(names[0], a)
        elif names[:2] == [LAYOUT, CLOSURE]:
            out.setdefault(LAYOUT, a)
    assert set(SHORT) - {"$s5Feeds9FeedStoreC3urlAC10Foundation3URLV_tcfc"} <= set(out)
    return out


def chain_names(feeds, file_addr):
    """The short names of FILE_ADDR's inline chain, innermost first."""
    return [SHORT.get(f, f) for f, _, _ in symbolize(feeds.dwarf, [file_addr])[0]]


def stacks(where):
    """Two stalls: layout() inlined into the closure, and the shared getter
    under the items getter under the closure, each called from reload ←
    viewDidLoad ← @objc thunk."""
    outer = [where[RELOAD], where[DID_LOAD], where[OBJC]]
    return [[where[LAYOUT]] + outer, [where[SHARED], where[ITEMS], where[CLOSURE]] + outer]


def identities(feeds, stack):
    return [f"{IMAGE}!{n}" for a in stack for n in chain_names(feeds, a)]


def groups(server, app, level=1):
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?level={level}&limit=500",
                       token=app["admin_token"])
    assert r.status == 200, r
    return [g for g in r.json["groups"] if g["reports"] > 0]


def ingest(server, app, feeds, stack, user):
    r = post(server, app, "/api/v1/ingest", native(fresh_id(), feeds, stack, user=user))
    assert r.status == 202, r
    return r.json["accepted"][0]["id"]


def test_groups_culprits_trees_and_reports_show_short_names(server, db, feeds, where):
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, feeds.dwarf).status in (200, 201)
    one, two = stacks(where)
    ids = [ingest(server, app, feeds, s, f"u{i}") for i, s in enumerate([one, one, two])]

    by_frames = {tuple(g["frames"]): g for g in groups(server, app, 2)}
    assert set(by_frames) == {tuple(identities(feeds, one)[:4]),
                              tuple(identities(feeds, two)[:4])}
    assert identities(feeds, one)[:3] == [
        f"{IMAGE}!FeedViewController.layout()",
        f"{IMAGE}!closure #1 () in FeedViewController.reload(animated: Bool)",
        f"{IMAGE}!FeedViewController.reload(animated: Bool)"]
    level1 = {tuple(g["frames"]): g for g in groups(server, app, 1)}
    g1 = level1[tuple(identities(feeds, one)[:2])]
    assert g1["reports"] == 2
    assert g1["culprit"]["function"] == "FeedViewController.layout()"
    assert g1["culprit"]["frame"] == f"{IMAGE}!FeedViewController.layout()"

    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{g1['key']}/tree",
                       token=app["admin_token"])
    assert r.status == 200, r
    names, node = [], r.json["root"]
    while node["children"]:
        node = node["children"][0]
        names.append(node["function"])
    assert names == ["@objc FeedViewController.viewDidLoad()",
                     "FeedViewController.viewDidLoad()",
                     "FeedViewController.reload(animated: Bool)",
                     "closure #1 () in FeedViewController.reload(animated: Bool)",
                     "FeedViewController.layout()"]

    rep = report(server, app, ids[0])
    inner = rep["threads"][0]["frames"][0]["frames"]
    assert [f["function"] for f in inner] == ["FeedViewController.layout()",
                                              "closure #1 () in FeedViewController.reload(animated: Bool)"]
    # The linkage names, as DWARF ('_' added) or the symbol table (as the
    # asm label spells it) give them.
    assert [f["symbol"].lstrip("_") for f in inner] == [LAYOUT, CLOSURE]
    r = server.request("GET", f"/api/v1/reports/{ids[0]}?demangle=full",
                       token=app["admin_token"])
    assert r.status == 200, r
    full = r.json["threads"][0]["frames"][0]["frames"]
    assert [f["function"] for f in full] == [
        "Feeds.FeedViewController.(layout in _4A5F0B6E6F2E4C1D8E9A7B3C2D1E0F9A)() -> ()",
        "closure #1 () -> () in Feeds.FeedViewController.reload(animated: Swift.Bool) -> ()"]
    assert r.json["threads"][0]["frames"][0]["address"] == \
        rep["threads"][0]["frames"][0]["address"]
    r = server.request("GET", f"/api/v1/reports/{ids[0]}?demangle=mangled",
                       token=app["admin_token"])
    assert r.status == 400 and r.error_code == "bad_query", r


def test_a_swift_hint_groups_and_shows_demangled(server, db, feeds):
    """A frame of an image nobody uploaded symbols for, with the device's
    Swift symbol name: the identity, the culprit and the report use the
    short form; the report keeps the hint as sent."""
    app = create_app(db)
    allow_everyone(server, app)
    body = native(fresh_id(), feeds, [])
    body["images"].append({"name": "/private/var/containers/Bundle/Application/X/Demo.app/"
                                   "Frameworks/Plugin.framework/Plugin",
                           "uuid": "5D1C2B3A-0000-4000-8000-000000000001", "arch": "arm64",
                           "load_address": "0x1c0000000", "size": 0x100000})
    body["threads"][0]["frames"] = [
        {"address": "0x1c0000100", "symbol": RELOAD},
        {"address": "0x1c0000200", "symbol": "plugin_main"}]
    r = post(server, app, "/api/v1/ingest", body)
    assert r.status == 202, r
    (g,) = groups(server, app, 1)
    assert g["frames"] == ["Plugin!FeedViewController.reload(animated: Bool)",
                           "Plugin!plugin_main"]
    assert g["culprit"]["frame"] == "Plugin!FeedViewController.reload(animated: Bool)"
    rep = report(server, app, r.json["accepted"][0]["id"])
    fr = rep["threads"][0]["frames"][0]
    assert (fr["symbol_hint"], fr["hint_function"]) == \
        (RELOAD, "FeedViewController.reload(animated: Bool)")
    assert "hint_function" not in rep["threads"][0]["frames"][1]


# ---- symcaches of the previous format ---------------------------------------

HEADER = struct.Struct("<8sII")  # magic, version, flags
# SYM_CACHE_VERSION: 3 since the page directory (symcache_format.h).
CURRENT = 3


def rewrite_symcache(data, version, raw_names):
    """A symcache with VERSION in its header and, with RAW_NAMES, every
    Swift function named by its linkage name as version 1 stored it: the
    name points into the symbol's own string, past the '_' (strings are
    shared, NUL-terminated)."""
    b = bytearray(data)
    magic, _, flags = HEADER.unpack_from(b, 0)
    assert magic == b"SSYMCACH"
    HEADER.pack_into(b, 0, magic, version, flags)
    strings_off, = struct.unpack_from("<I", b, 64)
    functions_off, nfunctions = struct.unpack_from("<II", b, 80)
    renamed = 0
    for i in range(nfunctions if raw_names else 0):
        name, symbol = struct.unpack_from("<II", b, functions_off + 8 * i)
        start = strings_off + symbol
        text = bytes(b[start:b.index(0, start)])
        skip = 1 if text.startswith(b"_$s") else 0 if text.startswith(b"$s") else None
        if skip is not None:
            struct.pack_into("<II", b, functions_off + 8 * i, symbol + skip, symbol)
            renamed += 1
    assert renamed >= (7 if raw_names else 0)
    return bytes(b)


def app_id(db, app):
    return psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")


def stored_symcache(db, app):
    return psql(db, "SELECT symcache_path || '|' || symcache_version FROM debug_files"
                    f" WHERE app_id = {app_id(db, app)}").split("|")


def plant(server, db, app, version, raw_names):
    """Replaces APP's one symcache by a rewritten copy under another name,
    its row pointing at it with VERSION; returns the copy's path."""
    path, _ = stored_symcache(db, app)
    old = server.data_dir / path
    planted = old.with_name("planted-" + old.name)
    planted.write_bytes(rewrite_symcache(old.read_bytes(), version, raw_names))
    planted.chmod(0o600)
    psql(db, f"UPDATE debug_files SET symcache_path = "
             f"'{planted.relative_to(server.data_dir)}', symcache_version = {version}"
             f" WHERE app_id = {app_id(db, app)}")
    return planted


@pytest.fixture
def own_db(cluster, request):
    """A database of its own: `reprocess --all` walks every app."""
    db = cluster.create_db("it_swift_" + request.node.name[5:40].lower())
    migrate(db)
    return db


def test_a_symcache_of_the_previous_format_is_rebuilt_not_served(own_db, make_server, feeds,
                                                                 where):
    server = make_server(db_url=own_db)
    app = create_app(own_db)
    allow_everyone(server, app)
    assert server.upload(app, feeds.dwarf).status in (200, 201)
    planted = plant(server, own_db, app, version=CURRENT - 1, raw_names=True)
    server.stop()
    server.start()  # nothing remembered of the row or the file

    one, _ = stacks(where)
    rid = ingest(server, app, feeds, one, "u1")
    rep = report(server, app, rid)
    assert not rep["pending"]
    assert [f["function"] for f in rep["threads"][0]["frames"][0]["frames"]] == \
        chain_names(feeds, one[0])
    path, version = stored_symcache(own_db, app)
    assert version == str(CURRENT)
    assert path != str(planted.relative_to(server.data_dir))
    assert (server.data_dir / path).is_file()
    assert not planted.exists()
    assert f"rebuilt at version {CURRENT}" in server.log()


def test_reprocess_all_moves_groups_of_raw_names_to_the_short_ones(own_db, make_server, feeds,
                                                                  where):
    """The database as a server before the demangler left it: reports
    grouped under raw Swift names by a symcache of the previous format.
    `stallscope reprocess --all` rebuilds the file, moves every report to
    the groups of the short names with exact counts, names the culprit and
    the tree anew; a report posted afterwards joins the same group; a second
    run moves nothing."""
    server = make_server(db_url=own_db, env={"STALLSCOPE_REPROCESS_INTERVAL": "3600"})
    app = create_app(own_db)
    allow_everyone(server, app)
    assert server.upload(app, feeds.dwarf).status in (200, 201)
    # As the previous build served it: raw names (a version it reads).
    planted = plant(server, own_db, app, version=CURRENT, raw_names=True)
    server.stop()
    server.start()
    one, two = stacks(where)
    for i in range(3):
        ingest(server, app, feeds, one, f"u{i}")
        ingest(server, app, feeds, two, f"u{i % 2}")
    before = groups(server, app, 1)
    assert sorted(g["reports"] for g in before) == [3, 3]
    assert all(g["frames"][0].startswith(f"{IMAGE}!$s5Feeds") for g in before)

    # The upgrade: the file and its row say what they are, version 1, and
    # the server runs the new build.
    server.stop()
    planted.write_bytes(rewrite_symcache(planted.read_bytes(), 1, raw_names=False))
    psql(own_db, f"UPDATE debug_files SET symcache_version = 1"
                 f" WHERE app_id = {app_id(own_db, app)}")
    server.start()
    env = {"STALLSCOPE_DATA_DIR": str(server.data_dir)}
    out = stallscope("reprocess", "--all", db_url=own_db, extra_env=env)
    assert json.loads(out.stdout) == {"reprocessed": 6, "regrouped": 6}
    assert stored_symcache(own_db, app)[1] == str(CURRENT)

    after = {tuple(g["frames"]): g for g in groups(server, app, 1)}
    want_one, want_two = (tuple(identities(feeds, s)[:2]) for s in (one, two))
    assert set(after) == {want_one, want_two}
    assert (after[want_one]["reports"], after[want_one]["users"]) == (3, 3)
    assert (after[want_two]["reports"], after[want_two]["users"]) == (3, 2)
    assert after[want_one]["culprit"]["function"] == "FeedViewController.layout()"
    level2 = groups(server, app, 2)
    assert sorted(g["reports"] for g in level2) == [3, 3]
    assert not any("$s5Feeds" in f for g in level2 for f in g["frames"])
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{after[want_one]['key']}/tree",
                       token=app["admin_token"])
    assert r.json["reports"] == 3
    assert r.json["root"]["children"][0]["function"] == "@objc FeedViewController.viewDidLoad()"
    # Nothing left counted under the raw names.
    assert psql(own_db, "SELECT coalesce(sum(reports), 0) FROM groups WHERE level = 1"
                        f" AND app_id = {app_id(own_db, app)}"
                        " AND frames::text LIKE '%$s5Feeds%'") == "0"

    ingest(server, app, feeds, one, "u9")
    after = {tuple(g["frames"]): g for g in groups(server, app, 1)}
    assert after[want_one]["reports"] == 4
    out = stallscope("reprocess", "--all", db_url=own_db, extra_env=env)
    assert json.loads(out.stdout) == {"reprocessed": 7, "regrouped": 0}


def test_a_culprit_kept_under_a_raw_swift_name_gives_way(db):
    """better_culprit (schema/functions): a Swift linkage name kept from
    before the upgrade is replaced by a demangled offer, never the reverse;
    any other kept function stays."""
    def better(kept, offer):
        return psql(db, f"SELECT better_culprit('{json.dumps(kept)}'::jsonb,"
                        f" '{json.dumps(offer)}'::jsonb)->>'function'")
    raw = {"frame": f"{IMAGE}!{RELOAD}", "function": RELOAD}
    short = {"frame": f"{IMAGE}!x", "function": SHORT[RELOAD]}
    assert better(raw, short) == SHORT[RELOAD]
    assert better(dict(raw, function="_" + RELOAD), short) == SHORT[RELOAD]
    assert better(short, raw) == SHORT[RELOAD]
    assert better({"frame": "a", "function": "stall_hash"}, short) == "stall_hash"
    assert better(raw, {"frame": "b", "function": OBJC}) == RELOAD
