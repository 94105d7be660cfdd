"""Issue 26, SPEC §10.4: the call tree read from the counts kept at ingest
(group_stack_days, schema/024) under the days, version and level-2
filters, and from the reports under any other filter; the counts kept
exact through ingest, a late dSYM's reprocessing, retention's purge and
the upgrade from 023.

Every expected tree is built here from the stacks the test posts
(test_call_tree's Stacks, llvm-symbolizer's inline chains), restricted to
the reports each query keeps; only the grouping (which key a report got)
is read back from the server."""

import time

import pytest

from conftest import create_app, migrate, psql, stallscope
from ingest_util import allow_everyone
from test_api_filters import day_of
from test_call_tree import (Stacks, check, expected, image, ingest_all,  # noqa: F401
                            shared_prefix_stacks, tree)
from test_triage_versions import keys_of

DAY = 86400
VERSIONS = ("8.3.0", "8.4.0")
DEVICES = ("iPhone14,2", "iPhone15,3", "iPad13,1")


def posted(st, image, n, day=None):
    """N reports over shared_prefix_stacks, plugin-innermost stacks and
    stacks taken from samples, versions and devices alternating: (body,
    what the test keeps of it)."""
    x, stacks = shared_prefix_stacks(image)
    f = image.by_function
    plugin = [("plugin", 0x40 + 4 * i) for i in range(5)]
    stacks = stacks + [plugin + [f[1], f[2]], plugin + [f[3]]]
    out = []
    for i in range(n):
        meta = {"version": VERSIONS[i % 2], "device": DEVICES[i % 3], "day": day}
        stack = stacks[i % len(stacks)]
        body = st.report(stack, user=f"u-{i % 7}", app_version=meta["version"],
                         device=meta["device"])
        if i % 5 == 4:
            # The heaviest sample is the representative stack, held inline.
            heavy = stacks[(i + 1) % len(stacks)]
            frames = lambda s: st.report(s)["threads"][0]["frames"]
            body["samples"] = [{"t_ms": 0, "frames": frames(heavy)},
                               {"t_ms": 50, "frames": frames([f[4]])},
                               {"t_ms": 100, "frames": frames(heavy)}]
            stack = heavy
        out.append((body, dict(meta, stack=stack)))
    return out


def place(server, app, st, sent, ids):
    """The kept facts of SENT with each report's keys and symbolized path."""
    for (_, p), rid in zip(sent, ids):
        p["id"] = rid
        p["key1"], p["key2"] = keys_of(server, app, rid)
        p["path"] = st.path(p["stack"])
    return [p for _, p in sent]


def check_tree(server, app, reports, key1, query, keep=lambda p: True):
    got = tree(server, app, key1, query)
    kept = [p["path"] for p in reports if p["key1"] == key1 and keep(p)]
    assert got["reports"] == len(kept), (key1, query)
    check(got["root"], expected(kept))


def check_filters(server, app, reports, days):
    """Every key1's tree under the aggregate's filters and, through the
    reports, under a device or OS version."""
    for key1 in {p["key1"] for p in reports}:
        for v in VERSIONS:
            check_tree(server, app, reports, key1, f"?version={v}", lambda p: p["version"] == v)
        for d in days:
            check_tree(server, app, reports, key1, f"?from={d}&to={d}",
                       lambda p: p["day"] == d)
            check_tree(server, app, reports, key1, f"?from={d}&version={VERSIONS[1]}",
                       lambda p: p["day"] >= d and p["version"] == VERSIONS[1])
        check_tree(server, app, reports, key1, f"?to={min(days)}",
                   lambda p: p["day"] <= min(days))
        for key2 in {p["key2"] for p in reports if p["key1"] == key1}:
            check_tree(server, app, reports, key1, f"?level2={key2}",
                       lambda p: p["key2"] == key2)
            check_tree(server, app, reports, key1, f"?level2={key2}&version={VERSIONS[0]}",
                       lambda p: p["key2"] == key2 and p["version"] == VERSIONS[0])
        check_tree(server, app, reports, key1, f"?device={DEVICES[1]}",
                   lambda p: p["device"] == DEVICES[1])
        check_tree(server, app, reports, key1, f"?device={DEVICES[0]}&version={VERSIONS[1]}",
                   lambda p: p["device"] == DEVICES[0] and p["version"] == VERSIONS[1])
        check_tree(server, app, reports, key1, "?os_version=17.2")


def app_id(db, app):
    return psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")


def test_counts_through_ingest_filters_and_retention(db, make_server, image):
    app = create_app(db)
    st = Stacks(image)
    now = int(time.time())
    days = {t: day_of(t) for t in (now - 10 * DAY, now)}
    reports = []
    # One data dir for every day's start: the dSYM's symcache is in it.
    server = make_server(start=False)
    for i, (t, day) in enumerate(days.items()):
        server.extra_env = {"STALLSCOPE_FAKE_NOW": str(t)}
        server.start()
        if i == 0:
            allow_everyone(server, app, retention_days=30)
            assert server.upload(app, image.dwarf).status in (200, 201)
        # Two batches a day: the second adds to the first's rows.
        for n in (23, 17):
            sent = posted(st, image, n, day)
            reports += place(server, app, st, sent, ingest_all(server, app,
                                                               [b for b, _ in sent]))
        server.stop()
    assert len({p["key1"] for p in reports}) >= 2
    server.extra_env = {"STALLSCOPE_FAKE_NOW": str(now)}
    server.start()
    for key1 in {p["key1"] for p in reports}:
        check_tree(server, app, reports, key1, "")
    check_filters(server, app, reports, sorted(days.values()))

    # Retention drops the old day: its reports leave the tree (and `purge`
    # leaves no count of that day behind).
    old = min(days.values())
    psql(db, f"UPDATE app_config SET retention_days = 7 WHERE app_id = {app_id(db, app)}")
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    assert psql(db, f"SELECT count(*) FROM group_stack_days WHERE app_id = {app_id(db, app)}"
                    f" AND day = '{old}'") == "0"
    kept = [p for p in reports if p["day"] != old]
    for key1 in {p["key1"] for p in reports}:
        check_tree(server, app, kept, key1, "")
        check_tree(server, app, kept, key1, f"?version={VERSIONS[1]}",
                   lambda p: p["version"] == VERSIONS[1])


@pytest.mark.parametrize("folded", [True, False], ids=["folded", "waiting"])
def test_counts_follow_a_late_dsym(db, cluster, make_server, image, folded):
    """Reports stored before their dSYM: once it arrives their stacks are
    symbolized again; an inline-keyed stack changes groups, a
    plugin-innermost one keeps its groups but not its stack. Their deltas
    counted before the dSYM arrives (folded), or still waiting for a fold
    all along (waiting: reprocessing moves the deltas' stacks instead of
    the counts, schema/042; a database of its own, which no other test's
    server folds)."""
    if folded:
        server = make_server()
    else:
        db = cluster.create_db("tree_counts_waiting")
        migrate(db)
        server = make_server(env={"STALLSCOPE_FOLD_INTERVAL": "3600"}, db_url=db)
    app = create_app(db)
    st = Stacks(image)
    allow_everyone(server, app)
    day = day_of(time.time())
    sent = posted(st, image, 30, day)
    ids = ingest_all(server, app, [b for b, _ in sent])
    before = {rid: keys_of(server, app, rid) for rid in ids}
    deltas = f"SELECT count(*) FROM group_deltas WHERE app_id = {app_id(db, app)}"
    if folded:
        for key1 in {k1 for k1, _ in before.values()}:
            # Before the dSYM, the counts and the reports agree.
            assert tree(server, app, key1) == tree(server, app, key1, "?os_version=17.2")
        assert psql(db, deltas) == "0"
    else:
        assert psql(db, deltas) == "30"
    assert server.upload(app, image.dwarf).status in (200, 201)
    waiting = (f"SELECT count(*) FROM reports WHERE app_id = {app_id(db, app)}"
               f" AND wait_uuids(waits) @> ARRAY['{image.uuid}'::uuid]")
    deadline = time.time() + 30
    while psql(db, waiting) != "0" and time.time() < deadline:
        time.sleep(0.2)
    assert psql(db, waiting) == "0", "the reports were not reprocessed"
    assert psql(db, deltas) == ("0" if folded else "30")
    reports = place(server, app, st, sent, ids)
    moved = {p["id"] for p in reports if (p["key1"], p["key2"]) != before[p["id"]]}
    assert moved and len(moved) < len(reports)
    for key1 in {p["key1"] for p in reports}:
        check_tree(server, app, reports, key1, "")
    check_filters(server, app, reports, [day])
    gone = {k1 for k1, _ in before.values()} - {p["key1"] for p in reports}
    assert gone
    assert psql(db, f"SELECT count(*) FROM group_stack_days WHERE app_id = {app_id(db, app)}"
                    f" AND key1 IN ({','.join(repr(k) for k in gone)})") == "0"


# The database as 023 left it: no group_stack_days, and the reports' stack
# hashes as uuid[] (036 made them bytes; it runs again after 024).
BACK_TO_023 = (
    "DROP TABLE group_stack_days; DELETE FROM schema_migrations WHERE version IN (24, 36, 51);"
    # 051 adds a column to the table 024 makes (and one to group_deltas).
    " ALTER TABLE group_deltas DROP COLUMN stack_ms;"
    " ALTER TABLE reports ALTER COLUMN raw_stacks DROP DEFAULT,"
    "  ALTER COLUMN raw_stacks TYPE uuid[] USING stack_hashes(raw_stacks),"
    "  ALTER COLUMN symbolized_stacks DROP DEFAULT,"
    "  ALTER COLUMN symbolized_stacks TYPE uuid[] USING stack_hashes(symbolized_stacks);")


def test_upgrade_from_023_backfills_the_counts(cluster, make_server, image):
    """A database whose reports were stored before 024: the migration
    counts them as ingest would have, and the tree is the one the reports
    gave (the report scan of a device filter, as every tree was read
    before). 024 only adds group_stack_days, so the database at 023 is this
    one without it; one report's stack is lost there (its skeleton names
    none), which the tree counts with no frames."""
    url = cluster.create_db("it_migrate_024")
    migrate(url)
    app = create_app(url)
    st = Stacks(image)
    server = make_server(db_url=url)
    allow_everyone(server, app)
    assert server.upload(app, image.dwarf).status in (200, 201)
    day = day_of(time.time())
    sent = posted(st, image, 40, day)
    reports = place(server, app, st, sent, ingest_all(server, app, [b for b, _ in sent]))
    kept = psql(url, "SELECT key1, key2, day, app_version, stack, frames, reports"
                     " FROM group_stack_days ORDER BY 1, 2, 3, 4, 5")
    psql(url, BACK_TO_023 + " DROP FUNCTION representative_stack(text, uuid[]);")
    assert "applied 024_" in migrate(url).stdout
    assert psql(url, "SELECT key1, key2, day, app_version, stack, frames, reports"
                     " FROM group_stack_days ORDER BY 1, 2, 3, 4, 5") == kept

    lost = reports[0]
    psql(url, BACK_TO_023 + " UPDATE reports SET symbolized = replace(symbolized, '\"stack\":', '\"was\":')"
              f" WHERE id = {lost['id']}")
    migrate(url)
    lost["path"] = []
    for key1 in {p["key1"] for p in reports}:
        got = tree(server, app, key1)
        assert got == tree(server, app, key1, "?os_version=17.2")
        check_tree(server, app, reports, key1, "")
    check_filters(server, app, reports, [day])
