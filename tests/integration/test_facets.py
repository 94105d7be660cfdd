"""Lists, details and triage filtered by exactly one dimension read the
facet rows (group_facet_days, schema/025): per group, day, dimension and
value. Their numbers — reports, users, first/last seen, the per-day series,
severity, affected and rate — must be those of the reports the test
posted, through reprocessing (a late dSYM moves every report), a purge,
the recount of a big group-day and the upgrade of a database at 024; two
dimension filters keep reading group_dim_days and stay right too.

Every expectation is computed here from the posted reports (their time,
user, dimensions and duration; a whitelisted user's reports are out of the
sample) and the groups the server put each report in (GET
/api/v1/reports/{id}), or with SQL of our own over the report rows."""

import random
import time

import pytest

from conftest import create_app, fixture_of, migrate, psql, stallscope
from ingest_util import Image, allow_everyone, fresh_id, native, post, severity
from test_activity import whitelist
from test_aggregates import ingest_users, move_hot_to_cool, recount_setup
from test_api_filters import (day_of, get, matches, place, post_batch, query, regroup,
                              stacks_of, start, summary)
from test_triage_versions import order_key

DAY = 86400
VIP = "vip"
DIMENSIONS = {"version": ("1.0", "1.1", "2.0"), "os_version": ("16.4", "17.2"),
              "device": ("iPhone14,2", "iPad13,1"), "kind": ("stall", "hang")}
DURATIONS = (None, 0, 249, 250, 900, 2500, 40000)
# An image no dSYM is ever uploaded for: its reports stay where they are.
OTHER_UUID = "0F0E0D0C-0B0A-4908-8706-050403020100"


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def sampled_user_days(recs, f):
    """The rate's denominator: per day of F's range and version (F's, or
    each), the distinct sampled users active then — with every user
    sampled and no check-in, the non-whitelisted users who stored a
    report that day with that version, wherever it was grouped."""
    keep = {k: v for k, v in f.items() if k in ("from", "to", "version")}
    pairs = {(day_of(r["at"]), r["version"], r["user"]) for r in recs
             if matches(r, keep) and r["user"] != VIP}
    return len(pairs)


def expected(rows, sampled):
    """What the API says of a group holding ROWS: summary, severity,
    affected (distinct non-whitelisted user-days) and rate."""
    out = summary(rows)
    out.update(severity([r["duration"] for r in rows]))
    affected = len({(r["user"], day_of(r["at"])) for r in rows if r["user"] != VIP})
    out["affected"] = affected
    out["rate"] = affected / sampled if sampled else None
    return out


FIELDS = ("reports", "users", "first_seen", "last_seen", "daily", "stall_ms",
          "max_duration_ms", "duration_hist", "affected")


def shown(group, want):
    """GROUP's numbers, its rate approximately WANT's."""
    got = {k: group[k] for k in FIELDS}
    if want["rate"] is None:
        assert group["rate"] is None
    else:
        assert group["rate"] == pytest.approx(want["rate"], rel=1e-12)
    return got


def check(server, app, recs, f):
    """Both levels' lists and every level-1 group's detail (and its
    subgroups) under the filters F."""
    want_any = [r for r in recs if matches(r, f)]
    sampled = sampled_user_days(recs, f)
    for level, field in ((1, "key1"), (2, "key2")):
        listed = get(server, app, f"/groups?level={level}&limit=500&{query(f)}")["groups"]
        rows = {}
        for r in want_any:
            rows.setdefault(r[field], []).append(r)
        want = {k: expected(v, sampled) for k, v in rows.items()}
        assert {g["key"]: shown(g, want[g["key"]]) for g in listed} == \
            {k: {n: w[n] for n in FIELDS} for k, w in want.items()}, (level, f)
    for key1 in {r["key1"] for r in recs}:
        detail = get(server, app, f"/groups/{key1}?{query(f)}")
        rows = [r for r in want_any if r["key1"] == key1]
        want = expected(rows, sampled)
        assert shown(detail["group"], want) == {n: want[n] for n in FIELDS}, (key1, f)
        subs = {}
        for r in rows:
            subs.setdefault(r["key2"], []).append(r)
        want_subs = {k: expected(v, sampled) for k, v in subs.items()}
        assert {g["key"]: shown(g, want_subs[g["key"]]) for g in detail["subgroups"]} == \
            {k: {n: w[n] for n in FIELDS} for k, w in want_subs.items()}, (key1, f)


def filters(days):
    """Every value of each dimension alone, alone within one day and from
    the second day on; then a few pairs (group_dim_days)."""
    out = []
    for dim, values in DIMENSIONS.items():
        for v in values:
            out += [{dim: v}, {dim: v, "from": days[0], "to": days[0]}, {dim: v, "from": days[1]}]
    out += [{"version": "1.0", "device": "iPad13,1"}, {"os_version": "17.2", "kind": "hang"},
            {"version": "1.1", "kind": "stall", "from": days[1]}]
    return out


def facets_agree(db, app_id):
    """Every group_facet_days row of APP_ID (both levels) holds the reports,
    distinct users, distinct in-sample users (its sketch and its count),
    first/last received_at and durations of the report rows it stands for,
    by our own SQL; and no row stands for no report."""
    cols = ("reports, hll_cardinality(users)::bigint,"
            " hll_cardinality(coalesce(sample_users, users))::bigint,"
            " affected, first_seen, last_seen, stall_ms, max_duration_ms,"
            " kept_duration_hist(duration_hist, max_duration_ms)")
    hist = ", ".join(f"count(*) FILTER (WHERE duration_ms >= {lo} AND duration_ms < {hi})"
                     for lo, hi in zip((0, 250, 500, 1000, 2000, 5000, 10000, 30000),
                                       (250, 500, 1000, 2000, 5000, 10000, 30000, 2**62)))
    for level, key in ((1, "key1"), (2, "key2")):
        kept = psql(db, f"SELECT key, day, dim, value, {cols} FROM group_facet_days"
                        f" WHERE app_id = {app_id} AND level = {level} ORDER BY 1, 2, 3, 4")
        ours = psql(db, f"""
            SELECT {key}, received_day, x.dim, x.value, count(*), count(DISTINCT user_id),
                   count(DISTINCT user_id) FILTER (WHERE in_sample),
                   count(DISTINCT user_id) FILTER (WHERE in_sample),
                   min(received_at), max(received_at), coalesce(sum(duration_ms), 0),
                   max(duration_ms), ARRAY[{hist}]
              FROM reports,
                   LATERAL (VALUES ('version', coalesce(app_version, '')),
                                   ('os_version', coalesce(os_version, '')),
                                   ('device', coalesce(device, '')), ('kind', kind))
                     AS x(dim, value)
             WHERE app_id = {app_id}
             GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4""")
        assert kept == ours, level
        assert kept


def make_dataset(db, tmp_root, image, seed):
    """Reports at four known times over three days, none symbolized yet
    (no dSYM; some name an image whose dSYM never comes): dimensions, users
    (one whitelisted) and durations drawn at random (seeded), version 2.0
    only from the second day, a device missing from some. Returns (app,
    app_id, recs, days)."""
    app = create_app(db)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    base = (int(time.time()) // DAY - 3) * DAY
    times = [base + 9 * 3600, base + 15 * 3600 + 1800, base + DAY + 11 * 3600,
             base + 2 * DAY + 8 * 3600]
    rng = random.Random(seed)
    stacks = stacks_of(image)
    recs = []
    for i, at in enumerate(times):
        server = start(db, tmp_root, at)
        if i == 0:
            allow_everyone(server, app, retention_days=30)
            whitelist(server, app, VIP)
        recs += post_batch(server, app, image, [
            {"stack": rng.choice(stacks), "user": rng.choice(["u0", "u1", "u2", "u3", VIP]),
             "version": rng.choice(DIMENSIONS["version"][:2 + (i >= 2)]),
             "os": rng.choice(DIMENSIONS["os_version"]),
             "device": rng.choice(DIMENSIONS["device"] + (None,)),
             "kind": rng.choice(DIMENSIONS["kind"]), "duration": rng.choice(DURATIONS),
             "uuid": image.uuid if rng.random() < 0.6 else OTHER_UUID,
             "at": at} for _ in range(14)])
        assert server.stop() == 0
    return app, app_id, recs, sorted({day_of(t) for t in times})


def test_one_dimension_exact_through_reprocessing_and_retention(db, tmp_root, image):
    app, app_id, recs, days = make_dataset(db, tmp_root, image, 25)
    assert any(r["user"] == VIP for r in recs) and any(r["device"] is None for r in recs)
    server = start(db, tmp_root)
    try:
        place(server, app, recs)
        facets_agree(db, app_id)
        for f in filters(days):
            check(server, app, recs, f)
        # The late dSYM: its reports move to their real groups, out of
        # group-days that keep the other image's reports.
        movers = [r for r in recs if r["uuid"] == image.uuid]
        before = {(r["key1"], day_of(r["at"])) for r in movers}
        assert before & {(r["key1"], day_of(r["at"])) for r in recs if r not in movers}
        regroup(server, app, image, movers)
        place(server, app, recs)
        facets_agree(db, app_id)
        for f in filters(days):
            check(server, app, recs, f)
        # A purge drops the first day's reports; every count stays.
        rows = psql(db, f"SELECT * FROM group_facet_days WHERE app_id = {app_id}"
                        " ORDER BY level, key, day, dim, value")
        allow_everyone(server, app, retention_days=2)
    finally:
        assert server.stop() == 0
    stallscope("purge", db_url=db)
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {app_id}"
                    f" AND received_day = '{days[0]}'") == "0"
    assert psql(db, f"SELECT * FROM group_facet_days WHERE app_id = {app_id}"
                    " ORDER BY level, key, day, dim, value") == rows
    server = start(db, tmp_root)
    try:
        for f in filters(days):
            check(server, app, recs, f)
    finally:
        assert server.stop() == 0


def test_big_group_day_recount_keeps_the_facets_exact(cluster, make_server, tmp_path):
    """Moves out of a group-day of over 1,000 reports leave its facet rows'
    users an upper bound until the recount (reports and durations exact at
    once); after it, every row is its reports' again."""
    db, server, app, app_id, version = recount_setup(cluster, make_server, "it_facet_recount")
    for vip in ("user-3", "user-500"):
        whitelist(server, app, vip)
    ingest_users(db, app_id, version, "hot", 1, 1010, duration_sql="i * 7")
    # Five: the group-day keeps over 1,000 reports at every move.
    move_hot_to_cool(db, app_id, [f"user-{i}" for i in range(1, 6)])
    assert psql(db, f"SELECT reports, hll_cardinality(users)::int, affected"
                    f" FROM group_facet_days WHERE app_id = {app_id} AND level = 1"
                    " AND key = 'hot' AND dim = 'version'") == "1005|1010|1008"
    stallscope("reprocess", db_url=db, extra_env={"STALLSCOPE_DATA_DIR": str(tmp_path)})
    facets_agree(db, app_id)
    got = get(server, app, "/groups?level=1&version=1.0")["groups"]
    assert {g["key"]: (g["users"], g["affected"]) for g in got} == \
        {"hot": (1005, 1004), "cool": (5, 4)}


def test_new_in_compares_version_keys(db, make_server, image):
    """2.010 and 2.10 are one version (SPEC §10.3 order): a group first seen
    in 2.010 is new in the newest version although the app's newest is
    spelled 2.10."""
    app = create_app(db)
    server = make_server()
    allow_everyone(server, app)
    f = image.by_function
    sent = {"old": ("2.9", [f[10], f[11]]), "new": ("2.010", [f[12], f[13]]),
            "newest": ("2.10", [f[14], f[15]])}
    key_of = {}
    for name, (version, stack) in sent.items():
        r = post(server, app, "/api/v1/ingest",
                 native(fresh_id(), image, stack, user=f"u-{name}", app_version=version))
        assert r.status == 202, r
        rid = r.json["accepted"][0]["id"]
        key_of[name] = server.request("GET", f"/api/v1/reports/{rid}",
                                      token=app["admin_token"]).json["key1"]
    newest = max((v for v, _ in sent.values()), key=order_key)
    got = {g["key"]: g for g in get(server, app, "/groups?level=1")["groups"]}
    for name, (version, _) in sent.items():
        want = version if order_key(version) == order_key(newest) else None
        assert got[key_of[name]]["new_in"] == want, name
        assert get(server, app, f"/groups/{key_of[name]}")["group"]["new_in"] == want, name
    assert got[key_of["new"]]["new_in"] == "2.010"


def test_upgrade_from_024_gives_the_same_replies(cluster, tmp_root, image):
    """A database whose aggregates are as 024 kept them (group_dim_days,
    group_version_days), migrated: 025 builds the facet rows from them, so
    every list, detail and comparison answers as before, and the rows are
    their reports'."""
    db = cluster.create_db("it_facets_upgrade")
    migrate(db)
    app, app_id, recs, days = make_dataset(db, tmp_root, image, 24)
    server = start(db, tmp_root)
    routes = [f"/groups?level={lv}&limit=500&{query(f)}" for lv in (1, 2)
              for f in [{}] + filters(days)]
    routes += [f"/compare?base=1.0&target=1.1&{query(f)}" for f in ({}, {"from": days[1]})]
    try:
        place(server, app, recs)
        routes += [f"/groups/{k}?{query(f)}" for k in {r["key1"] for r in recs}
                   for f in [{}] + filters(days)]
        before = [get(server, app, p) for p in routes]
    finally:
        assert server.stop() == 0
    # Back to 024: the version rows as group_version_days kept them.
    psql(db, """
        CREATE TABLE group_version_days (
          app_id bigint NOT NULL, level smallint NOT NULL CHECK (level IN (1, 2)),
          key text NOT NULL, day date NOT NULL, app_version text NOT NULL,
          reports bigint NOT NULL CHECK (reports >= 0),
          affected bigint NOT NULL CHECK (affected >= 0),
          users hll(12, 5, 1024, 0) NOT NULL,
          PRIMARY KEY (app_id, level, key, day, app_version)) WITH (fillfactor = 80);
        INSERT INTO group_version_days
        SELECT app_id, level, key, day, value, reports, affected,
               coalesce(sample_users, users)
          FROM group_facet_days WHERE dim = 'version';
        DROP TABLE group_facet_days;
        DROP FUNCTION groups_triage(bigint, smallint, text[], date, date, text, text, text,
                                    text);
        DROP FUNCTION move_facet_days(bigint, smallint, text, text, text, date, timestamptz,
                                      text, text, text, text, text, bigint);
        DELETE FROM schema_migrations WHERE version = 25;
        -- ...the dimension rows' histograms as 024 kept them (before 034)...
        UPDATE group_dim_days SET duration_hist = kept_duration_hist(duration_hist,
                                                                     max_duration_ms)
         WHERE duration_hist IS NULL;
        -- ...and their dimensions in the row (before 039).
        ALTER TABLE group_dim_days ADD COLUMN app_version text, ADD COLUMN os_version text,
          ADD COLUMN device text, ADD COLUMN kind text;
        UPDATE group_dim_days d SET app_version = c.app_version, os_version = c.os_version,
               device = c.device, kind = c.kind
          FROM dim_combos c WHERE c.id = d.combo;
        ALTER TABLE group_dim_days DROP CONSTRAINT group_dim_days_pkey;
        DROP INDEX group_dim_days_filter_idx;
        ALTER TABLE group_dim_days DROP COLUMN combo;
        ALTER TABLE group_dim_days ADD PRIMARY KEY (app_id, level, key, day, app_version,
                                                    os_version, device, kind, in_sample);
        CREATE INDEX group_dim_days_filter_idx
          ON group_dim_days (app_id, level, day, app_version, os_version, device, kind);
        DROP TABLE dim_combos;
        DELETE FROM schema_migrations WHERE version = 39;
        -- ...and no fine duration histograms (before 044).
        ALTER TABLE groups DROP COLUMN duration_fine;
        ALTER TABLE group_days DROP COLUMN duration_fine;
        ALTER TABLE group_dim_days DROP COLUMN duration_fine;
        DELETE FROM schema_migrations WHERE version = 44""")
    assert "applied 025_" in migrate(db).stdout
    facets_agree(db, app_id)
    server = start(db, tmp_root)
    try:
        assert [get(server, app, p) for p in routes] == before
    finally:
        assert server.stop() == 0
