"""Issue 42, SPEC §10.7: GET …/groups?q=TEXT keeps the groups whose
representative stacks have a frame whose function, file or image contains
TEXT (case-insensitive, at least 3 characters), with every other list
parameter; from group_terms (schema/046) and its trigram index. Also GET
…/reports?user_id=U (a user's reports, newest first, paged) and the 404 of
an unknown level-2 group's reports.

Expected answers come from what the test posted and from llvm-symbolizer's
frames (ingest_util.symbolize), never from the server's."""

import json
import urllib.parse

import pytest

from conftest import create_app, fixture_of, migrate, psql
from ingest_util import Image, allow_everyone, fresh_id, native, post, report, symbolize
from test_reprocess import wait_for


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def stacks_of(image):
    f = image.by_function
    return [[f[1], f[2]], [f[3], f[4], f[5]], [f[3], f[4], f[6]], [f[7], f[1]]]


def terms_of(image, stack):
    """What a search finds a stack by: the image's basename and each
    frame's inline functions and files, as llvm-symbolizer names them."""
    terms = {image.name.rsplit("/", 1)[-1]}
    for chain in symbolize(image.dwarf, stack):
        for function, file, _ in chain:
            terms.update(t for t in (function, file) if t)
    return terms


def ingest(server, app, image, stacks, users=("u-1",), version="8.0.1"):
    """One report per (stack, user); returns [(stack index, user, id)]."""
    bodies, who = [], []
    for i, stack in enumerate(stacks):
        for u in users:
            bodies.append(native(fresh_id(), image, stack, user=u, app_version=version))
            who.append((i, u))
    r = post(server, app, "/api/v1/ingest", {"reports": bodies})
    assert r.status == 202 and not r.json["rejected"], r
    return [(i, u, a["id"]) for (i, u), a in zip(who, r.json["accepted"])]


def groups(server, app, **query):
    query = {k: v for k, v in query.items() if v is not None}
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?"
                       + urllib.parse.urlencode(query), token=app["admin_token"])
    assert r.status == 200, r
    return r.json


def keys_found(server, app, **query):
    return {g["key"] for g in groups(server, app, limit=500, **query)["groups"]}


def expected(texts_by_key, q):
    return {k for k, terms in texts_by_key.items() if any(q.lower() in t.lower() for t in terms)}


def a_distinctive_piece(terms_by_key):
    """A substring (upper-cased, 5 characters) of a function name that only
    some of the groups have."""
    every = set().union(*terms_by_key.values())
    for t in sorted(every):
        for k in range(len(t) - 5):
            piece = t[k:k + 5]
            if piece.isalpha() and 0 < len(expected(terms_by_key, piece)) < len(terms_by_key):
                return piece.upper()
    raise AssertionError("no distinctive piece of a name")


@pytest.fixture(scope="module")
def searched(server, db, image):
    """An app with the dSYM and the four stacks, two users each."""
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    stacks = stacks_of(image)
    posted = ingest(server, app, image, stacks, users=("u-1", "u-2"))
    by_level = {1: {}, 2: {}}
    for i, _, rid in posted:
        rep = report(server, app, rid)
        for level, key in ((1, rep["key1"]), (2, rep["key2"])):
            by_level[level].setdefault(key, set()).update(terms_of(image, stacks[i]))
    return app, by_level, posted


def test_search_by_a_piece_of_a_function_in_any_case(server, searched):
    app, by_level, _ = searched
    piece = a_distinctive_piece(by_level[1])
    want = expected(by_level[1], piece)
    assert want and want != set(by_level[1])
    assert keys_found(server, app, q=piece) == want
    assert keys_found(server, app, q=piece.lower()) == want
    assert keys_found(server, app, q=piece, level=2) == expected(by_level[2], piece)


def test_search_by_image_and_file(server, image, searched):
    app, by_level, _ = searched
    base = image.name.rsplit("/", 1)[-1]
    assert keys_found(server, app, q=base.upper()) == set(by_level[1])
    files = sorted({t for terms in by_level[1].values() for t in terms if "/" in t or "." in t})
    assert files, "the fixture's DWARF names files"
    name = files[0].rsplit("/", 1)[-1]
    assert keys_found(server, app, q=name) == expected(by_level[1], name)


def test_search_finds_a_group_by_a_frame_that_is_not_its_culprit(server, image, searched):
    """The issue's acceptance: a name of an outer frame of the stack, not
    the culprit's function, file or image, finds the group."""
    app, by_level, posted = searched
    found = 0
    for i, stack in enumerate(stacks_of(image)):
        rid = next(r for j, _, r in posted if j == i)
        key1 = report(server, app, rid)["key1"]
        (g,) = [g for g in groups(server, app, limit=500)["groups"] if g["key"] == key1]
        culprit = g["culprit"]
        assert culprit and culprit["function"], g
        named = [culprit["function"], culprit["file"] or "", culprit["frame"]]
        outer = {t for chain in symbolize(image.dwarf, stack[1:])
                 for function, file, _ in chain for t in (function, file) if t}
        outer = sorted(t for t in outer
                       if len(t) >= 3 and not any(t.lower() in n.lower() for n in named))
        if not outer:
            continue
        assert key1 in keys_found(server, app, q=outer[0]), (outer[0], culprit)
        assert keys_found(server, app, q=outer[0]) == expected(by_level[1], outer[0])
        found += 1
    assert found, "no stack has an outer frame named apart from its culprit"


def test_a_new_group_whose_stack_is_lost_is_found_by_its_culprit(server, db, image):
    """A group made after the upgrade whose representative stack is lost
    (the nil stack: no text for the fold to take terms from) is found by
    its culprit all the same, and only by what its culprit and keyed
    frames name."""
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    # The app's deltas lose their stack before any fold reads them.
    psql(db, "CREATE FUNCTION it_lose_stack() RETURNS trigger LANGUAGE plpgsql AS $$"
             " BEGIN NEW.stack := '00000000-0000-0000-0000-000000000000';"
             " NEW.stack_frames := NULL; RETURN NEW; END $$;"
             " CREATE TRIGGER it_lose_stack BEFORE INSERT ON group_deltas FOR EACH ROW"
             f" WHEN (NEW.app_id = {app_id}) EXECUTE FUNCTION it_lose_stack();",
         fold_first=False)
    try:
        stack = stacks_of(image)[1]
        ((_, _, rid),) = ingest(server, app, image, [stack])
    finally:
        psql(db, "DROP TRIGGER it_lose_stack ON group_deltas; DROP FUNCTION it_lose_stack();",
             fold_first=False)
    key1 = report(server, app, rid)["key1"]
    (g,) = groups(server, app)["groups"]
    assert g["key"] == key1 and g["culprit"]["function"], g
    assert psql(db, "SELECT count(*) FROM group_stack_days"
                    f" WHERE app_id = {app_id} AND stack = '00000000-0000-0000-0000-000000000000'") == "1"
    assert keys_found(server, app, q=g["culprit"]["function"]) == {key1}
    assert keys_found(server, app, q=g["culprit"]["function"].upper(), level=2) == {
        report(server, app, rid)["key2"]}
    # What only the lost stack named is not found.
    named = " ".join([g["culprit"]["function"], g["culprit"]["file"] or "",
                      json.dumps(g["frames"])]).lower()
    only_stack = sorted(t for t in terms_of(image, stack) if len(t) >= 3 and t.lower() not in named)
    if only_stack:
        assert keys_found(server, app, q=only_stack[0]) == set()


def test_search_with_the_other_list_parameters(server, searched):
    app, by_level, _ = searched
    piece = a_distinctive_piece(by_level[1])
    want = expected(by_level[1], piece)
    for sort in ("count", "users", "last_seen", "stall_ms"):
        assert keys_found(server, app, q=piece, sort=sort) == want
    assert keys_found(server, app, q=piece, version="8.0.1") == want
    assert keys_found(server, app, q=piece, version="0.0.0") == set()
    assert keys_found(server, app, q=piece, version="8.0.1", kind="stall") == want
    assert keys_found(server, app, q=piece, status="open") == want
    assert keys_found(server, app, q=piece, status="resolved") == set()
    # Paged one group at a time, the same groups.
    seen, cursor = [], None
    while True:
        page = groups(server, app, q=piece, limit=1, cursor=cursor)
        seen += [g["key"] for g in page["groups"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert sorted(seen) == sorted(want)


def test_search_text_is_literal_and_bounded(server, searched):
    app, _, _ = searched
    for q in ("ab", "é1", ""):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?"
                           + urllib.parse.urlencode({"q": q}), token=app["admin_token"])
        assert r.status == 400 and r.error_code == "bad_query", (q, r)
        assert "q:" in r.json["error"]["message"]
    # LIKE's wildcards are characters like any other.
    assert keys_found(server, app, q="%%%") == set()
    assert keys_found(server, app, q="___") == set()
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups?q=" + "a" * 257,
                       token=app["admin_token"])
    assert r.status == 400


def test_search_is_served_by_the_trigram_index(db, searched):
    app, _, _ = searched
    # Few rows here: the planner would read the app's range of the primary
    # key. Without it, the trigram index answers the substring match.
    plan = psql(db, "SET enable_seqscan = off; SET enable_indexscan = off;"
                    " SET enable_indexonlyscan = off; EXPLAIN SELECT key FROM group_terms"
                    " WHERE term ILIKE '%abcd%'")
    assert "group_terms_trgm" in plan, plan


def test_unsymbolized_then_reprocessed_groups_are_found_by_their_new_names(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    stacks = stacks_of(image)[:2]
    posted = ingest(server, app, image, stacks)
    terms = terms_of(image, stacks[1]) - {image.name}
    function = sorted(t for t in terms if "/" not in t and len(t) >= 4)[0]
    assert keys_found(server, app, q=image.name) == {report(server, app, rid)["key1"]
                                                     for _, _, rid in posted}
    assert keys_found(server, app, q=function) == set()
    assert server.upload(app, image.dwarf).status in (200, 201)
    rid = posted[1][2]
    wait_for(lambda: not report(server, app, rid)["pending"], 30)
    key1s = {report(server, app, r)["key1"] for i, _, r in posted
             if function.lower() in " ".join(terms_of(image, stacks[i])).lower()}
    assert wait_for(lambda: keys_found(server, app, q=function) == key1s, 30)


def test_the_upgrade_makes_stored_groups_searchable(cluster, make_server, image):
    """Migration 046's backfill: the terms of the stored groups, from the
    call tree's stacks, their culprits and keyed frames. On a database of
    its own: taking 046 back and up again locks every report partition,
    which other modules' servers on the shared database would hold up."""
    db = cluster.create_db("it_search_upgrade")
    migrate(db)
    server = make_server(db_url=db)
    app = create_app(db)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    stacks = stacks_of(image)
    posted = ingest(server, app, image, stacks)
    by_key = {}
    for i, _, rid in posted:
        by_key.setdefault(report(server, app, rid)["key1"], set()).update(
            terms_of(image, stacks[i]))
    piece = a_distinctive_piece(by_key)
    assert keys_found(server, app, q=piece) == expected(by_key, piece)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    before = psql(db, f"SELECT level, key, term FROM group_terms WHERE app_id = {app_id}"
                      " ")
    psql(db, f"DELETE FROM group_terms WHERE app_id = {app_id}")
    assert keys_found(server, app, q=piece) == set()
    # Back to before 046 and up again (the server stays up: nothing
    # writes meanwhile).
    psql(db, "DROP TABLE group_terms; DROP INDEX reports_user_idx;"
             " ALTER TABLE image_waits DROP COLUMN app_versions, DROP COLUMN last_seen;"
             " DELETE FROM schema_migrations WHERE version = 46")
    migrate(db)
    assert keys_found(server, app, q=piece) == expected(by_key, piece)
    after = psql(db, f"SELECT level, key, term FROM group_terms WHERE app_id = {app_id}"
                     " ")
    assert set(before.splitlines()) <= set(after.splitlines())


# ---- GET …/reports?user_id= ----

def user_reports(server, app, **query):
    return server.request("GET", f"/api/v1/apps/{app['app']}/reports?"
                          + urllib.parse.urlencode(query), token=app["admin_token"])


def test_a_users_reports_newest_first_paged(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    stacks = stacks_of(image)
    mine = [rid for _, _, rid in ingest(server, app, image, stacks[:2], users=("alice",))]
    ingest(server, app, image, stacks, users=("bob",))
    mine += [rid for _, _, rid in ingest(server, app, image, stacks[2:], users=("alice",))]
    ids = psql(db, "SELECT string_agg(r.id::text, ',' ORDER BY r.received_at DESC, r.id DESC)"
                   " FROM reports r JOIN apps a ON a.id = r.app_id"
                   f" WHERE a.bundle_id = '{app['app']}' AND r.user_id = 'alice'")
    want = [int(x) for x in ids.split(",")]
    assert sorted(want) == sorted(mine)
    r = user_reports(server, app, user_id="alice")
    assert r.status == 200, r
    assert [x["id"] for x in r.json["reports"]] == want
    assert r.json["next_cursor"] is None
    first = r.json["reports"][0]
    rep = report(server, app, first["id"])
    for k in ("report_id", "user_id", "app_version", "kind", "key1", "key2", "received_at"):
        assert first[k] == rep[k], k
    got, cursor = [], None
    while True:
        q = {"user_id": "alice", "limit": 1}
        if cursor:
            q["cursor"] = cursor
        page = user_reports(server, app, **q)
        assert page.status == 200, page
        got += [x["id"] for x in page.json["reports"]]
        cursor = page.json["next_cursor"]
        if not cursor:
            break
    assert got == want
    day = first["received_at"][:10]
    assert [x["id"] for x in user_reports(server, app, user_id="alice", **{"from": day, "to": day})
            .json["reports"]] == want
    assert user_reports(server, app, user_id="alice", to="2000-01-01").json["reports"] == []
    assert user_reports(server, app, user_id="nobody").json == {"reports": [],
                                                                 "next_cursor": None}
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    plan = psql(db, "SET enable_seqscan = off; EXPLAIN SELECT * FROM reports"
                    f" WHERE app_id = {app_id} AND hashtext(user_id) = hashtext('alice')"
                    " AND user_id = 'alice' ORDER BY received_at DESC, id DESC LIMIT 5")
    assert "Index Cond: (hashtext(user_id)" in plan, plan




def test_a_users_reports_refuses_bad_queries(server, db):
    app = create_app(db)
    assert user_reports(server, app).status == 400
    assert user_reports(server, app, user_id="").status == 400
    assert user_reports(server, app, user_id="a", cursor="x").status == 400
    assert user_reports(server, app, user_id="a", **{"from": "2026-13-01"}).status == 400
    # Ingest's bound on a user id (256 bytes): a longer one was never stored.
    r = user_reports(server, app, user_id="u" * 257)
    assert r.status == 400 and r.error_code == "bad_query", r
    assert "256" in r.json["error"]["message"] and "user_id" in r.json["error"]["message"]
    r = user_reports(server, app, user_id="u" * 256)
    assert r.status == 200 and r.json == {"reports": [], "next_cursor": None}, r
    # Not UTF-8 (the server refuses it before any route), here and in q=.
    for path in ("reports?user_id=caf%E9", "groups?q=caf%E9"):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/{path}", token=app["admin_token"])
        assert r.status == 400 and r.error_code == "bad_query", (path, r)
    r = server.request("GET", f"/api/v1/apps/{app['app']}/reports?user_id=a",
                       token=app["ingest_key"])
    assert r.status in (401, 403)


# ---- level-2 reports of an unknown group ----

def test_reports_of_an_unknown_level2_group_are_404(server, db, image, searched):
    app, by_level, posted = searched
    rep = report(server, app, posted[0][2])
    other = report(server, app, posted[-1][2])
    assert rep["key1"] != other["key1"]
    base = f"/api/v1/apps/{app['app']}/groups"
    ok = server.request("GET", f"{base}/{rep['key1']}/{rep['key2']}/reports",
                        token=app["admin_token"])
    assert ok.status == 200 and ok.json["reports"], ok
    for key1, key2 in ((rep["key1"], "0123456789abcdef"), (other["key1"], rep["key2"])):
        r = server.request("GET", f"{base}/{key1}/{key2}/reports", token=app["admin_token"])
        assert r.status == 404 and r.error_code == "not_found", r
        detail = server.request("GET", f"{base}/0123456789abcdef", token=app["admin_token"])
        assert detail.status == 404
