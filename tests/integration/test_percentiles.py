"""SPEC §10.1, issue 42 item 2: p50, p90 and p99 per group (both levels)
under every filter, within 5% of the exact percentile of the durations in
range, mergeable across days and dimensions, unchanged in meaning by
reprocessing, and backfilled by the upgrade (schema/044).

The exact percentile is the nearest rank (the smallest duration with at
least ceil(p × N) of the N known durations at or below it), computed here
from the durations the test posted; the stored fine histograms are
compared with buckets computed here (k for a duration in
(1.04^(k-1), 1.04^k] ms)."""

import math
import random
import time

import pytest

from conftest import DIM_ROWS, create_app, migrate, psql
from test_aggregates import old_database
from test_api_filters import (DAY, KINDS, VERSIONS, day_of, get, image, matches, place,
                              post_over_days, query, regroup, stacks_of, start)
from test_severity import DURATIONS as EDGE_DURATIONS, FILTERS, served_over_three_days

assert image  # the dSYM fixture test_api_filters defines, shared

PERCENTILES = (("p50_ms", 0.50), ("p90_ms", 0.90), ("p99_ms", 0.99))


def exact(durations):
    """The nearest-rank percentiles of the known DURATIONS (None each when
    there is none)."""
    known = sorted(d for d in durations if d is not None)
    if not known:
        return {name: None for name, _ in PERCENTILES}
    return {name: known[max(math.ceil(p * len(known)), 1) - 1] for name, p in PERCENTILES}


def close(got, want):
    """GOT within 5% of WANT (both None, or 0 exactly)."""
    return all((g is None and w is None) or
               (g is not None and w is not None and abs(g - w) <= 0.05 * w)
               for g, w in ((got[k], want[k]) for k, _ in PERCENTILES))


def shown(group):
    return {k: group[k] for k, _ in PERCENTILES}


def check_percentiles(server, app, recs, f):
    """Both levels' lists, every level-1 detail and its subgroups under
    filters F: each group's percentiles within 5% of the exact ones of its
    matching reports."""
    want_any = [r for r in recs if matches(r, f)]
    for level, key in ((1, "key1"), (2, "key2")):
        listed = get(server, app, f"/groups?level={level}&limit=500&{query(f)}")["groups"]
        want = {}
        for r in want_any:
            want.setdefault(r[key], []).append(r["duration"])
        assert {g["key"] for g in listed} == set(want), (level, f)
        for g in listed:
            assert close(shown(g), exact(want[g["key"]])), (level, f, g["key"], shown(g),
                                                            exact(want[g["key"]]))
    for key1 in {r["key1"] for r in want_any}:
        detail = get(server, app, f"/groups/{key1}?{query(f)}")
        rows = [r for r in want_any if r["key1"] == key1]
        assert close(shown(detail["group"]), exact([r["duration"] for r in rows])), (key1, f)
        for g in detail["subgroups"]:
            durations = [r["duration"] for r in rows if r["key2"] == g["key"]]
            assert close(shown(g), exact(durations)), (key1, g["key"], f)


def drawn_duration(rng):
    """Mostly what hangs last (log-uniform from 250 ms to 2 minutes), some
    short ones, the display buckets' edges, and unknown."""
    pick = rng.random()
    if pick < 0.7:
        return int(math.exp(rng.uniform(math.log(250), math.log(120000))))
    if pick < 0.8:
        return rng.randrange(0, 60)
    if pick < 0.95:
        return rng.choice(EDGE_DURATIONS)
    return None


@pytest.fixture(scope="module")
def dataset(db, tmp_root, image):
    """Reports of one app over three days, 60 durations a day drawn
    (seeded) so each group holds dozens."""
    rng = random.Random(42)
    yield from served_over_three_days(db, tmp_root, image, rng,
                                      lambda: [drawn_duration(rng) for _ in range(60)])


def test_percentiles_within_5_percent_on_every_read_path_and_filter(dataset):
    server, app, recs, days = dataset
    assert len({r["key1"] for r in recs}) >= 2 and len({r["key2"] for r in recs}) >= 3
    everything = get(server, app, "/groups?level=1&limit=500")["groups"]
    # Not the display buckets: p90 of the busiest group is a duration.
    assert any(g["p90_ms"] not in (None, 250, 500, 1000, 2000, 5000, 10000, 30000)
               for g in everything)
    for f in FILTERS(days):
        assert any(matches(r, f) for r in recs), f
        check_percentiles(server, app, recs, f)


def fine_bucket(ms):
    return -1 if ms <= 0 else math.ceil(math.log(ms) / math.log(1.04))


def fine_rows_agree(db, app_id):
    """Every aggregate row's fine histogram (a dimension or facet row of at
    most one duration keeps none: the bucket of its max) holds the buckets
    of the durations of the report rows it stands for."""
    kept = "kept_fine_hist(duration_fine, max_duration_ms)"
    tables = [("group_days", ", day", ""), ("groups", "", ""),
              ("group_dim_days", ", day, app_version, os_version, device, kind", "")]
    tables += [("group_facet_days", f", day, {column}", f" AND dim = '{dim}'")
               for dim, column in (("version", "app_version"), ("os_version", "os_version"),
                                   ("device", "device"), ("kind", "kind"))]
    for table, dims, where in tables:
        ours_dims = dims.replace(", day", ", received_day")
        for column in ("app_version", "os_version", "device"):
            ours_dims = ours_dims.replace(column, f"coalesce({column}, '')")
        kept_dims = ", day, value" if table == "group_facet_days" else dims
        rows = DIM_ROWS if table == "group_dim_days" else table
        for level, key in ((1, "key1"), (2, "key2")):
            stored = {}
            for line in psql(db, f"SELECT key{kept_dims}, {kept} FROM {rows}"
                                 f" WHERE app_id = {app_id} AND level = {level}{where}"
                                 " AND reports > 0").splitlines():
                *k, fine = line.split("|")
                pairs = [int(x) for x in fine.strip("{}").split(",") if x] if fine else []
                stored[tuple(k)] = dict(zip(pairs[::2], pairs[1::2]))
            ours = {}
            for line in psql(db, f"SELECT {key}{ours_dims}, duration_ms FROM reports"
                                 f" WHERE app_id = {app_id}").splitlines():
                *k, ms = line.split("|")
                hist = ours.setdefault(tuple(k), {})
                if ms:
                    hist[fine_bucket(int(ms))] = hist.get(fine_bucket(int(ms)), 0) + 1
            assert stored == ours, (table, where, level)


def test_fine_rows_hold_the_reports_buckets(dataset, db):
    server, app, recs, days = dataset
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    fine_rows_agree(db, app_id)
    # Rows of a single duration keep no histogram; rows of more do.
    for table in ("group_dim_days", "group_facet_days"):
        pairs = set(psql(db, f"SELECT duration_fine IS NULL, (SELECT coalesce(sum(n), 0) FROM"
                             f" fine_pairs(kept_fine_hist(duration_fine, max_duration_ms))) <= 1"
                             f" FROM {table} WHERE app_id = {app_id}").splitlines())
        assert {"t|t", "f|f"} <= pairs and "t|f" not in pairs, (table, pairs)


def test_one_report_groups_and_tiny_durations_are_exact(db, tmp_root, image):
    """A group of one report answers its duration exactly at every
    percentile, and durations below 25 ms (a bucket holds at most one whole
    number there) exactly too."""
    app = create_app(db)
    stacks = stacks_of(image)
    at = (int(time.time()) // DAY - 1) * DAY + 3600
    durations = [0, 1, 2, 3, 7, 13, 24]
    recs = post_over_days(db, tmp_root, app, image, [at], lambda i, t: [
        {"stack": stacks[0], "user": "u1", "version": "1.0", "os": "17.2",
         "device": "iPhone14,2", "kind": "hang", "at": t, "duration": d} for d in durations] + [
        {"stack": stacks[1], "user": "u2", "version": "1.0", "os": "17.2",
         "device": "iPhone14,2", "kind": "hang", "at": t, "duration": 123457}], upload=True)
    server = start(db, tmp_root)
    try:
        place(server, app, recs)
        for level, key in ((1, "key1"), (2, "key2")):
            for g in get(server, app, f"/groups?level={level}")["groups"]:
                mine = [r["duration"] for r in recs if r[key] == g["key"]]
                assert shown(g) == exact(mine), (level, g["key"], mine)
    finally:
        assert server.stop() == 0


def test_reprocessing_keeps_percentiles_exact(db, tmp_root, image):
    """Reports stored before their dSYM share group-days with reports of an
    image no dSYM serves; the dSYM moves the first ones (the longest
    durations) out: both sides' percentiles and rows stay right."""
    app = create_app(db)
    other_uuid = "0F0F0F0F-1111-2222-3333-555555555555"
    base = (int(time.time()) // DAY - 1) * DAY
    stacks = stacks_of(image)
    rng = random.Random(7)
    drawn = [drawn_duration(rng) for _ in range(48)]
    stays = lambda n, d: d is not None and d < 5000 and n % 3 != 2
    batch_of = lambda i, at: [
        dict({"stack": stacks[n % 4], "user": f"u{n % 3}", "version": VERSIONS[n % 2],
              "os": "17.2", "device": "iPhone14,2", "kind": KINDS[n % 2], "at": at,
              "duration": d, "stays": stays(n, d)},
             **({"uuid": other_uuid} if stays(n, d) else {}))
        for n, d in enumerate(drawn)]
    recs = post_over_days(db, tmp_root, app, image, (base + 8 * 3600, base + DAY + 9 * 3600),
                          batch_of, upload=False)
    server = start(db, tmp_root)
    try:
        place(server, app, recs)
        movers = [r for r in recs if not r["stays"]]
        check_percentiles(server, app, recs, {})
        regroup(server, app, image, movers)
        place(server, app, recs)
        for f in ({}, {"from": day_of(base), "to": day_of(base)}, {"kind": "stall"},
                  {"version": VERSIONS[0], "kind": "stall"}):
            check_percentiles(server, app, recs, f)
        app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
        fine_rows_agree(db, app_id)
    finally:
        assert server.stop() == 0


def test_upgrade_computes_fine_histograms_from_the_reports(cluster, tmp_path):
    """A database before 044 with reports and their aggregate rows (a
    dimension or facet row of one duration keeping no histogram, as 034
    made them) gets each row's fine histogram from the reports it counts;
    a report whose delta still waits is in no row and is left to the
    fold, which then counts it once."""
    rng = random.Random(44)
    url, _, app_id, recs = old_database(cluster, tmp_path, "it_migrate_percentiles", 44, 90,
                                        rng, drawn_duration)
    waiting = next(r for r in recs if r["duration"] is not None)
    one_or_none = "CASE WHEN count(duration_ms) > 1 THEN '{{0,0,0,0,0,0,0,0}}'::integer[] END"
    psql(url, f"""
        INSERT INTO group_deltas (app_id, report, key1, key2, day, at, user_id, app_version,
                                  os_version, device, kind, in_sample, duration_ms)
        SELECT app_id, id, key1, key2, received_day, received_at, user_id, app_version,
               os_version, coalesce(device, ''), kind, in_sample, duration_ms
          FROM reports WHERE id = {waiting['id']};
        INSERT INTO dim_combos (app_id, app_version, os_version, device, kind)
        SELECT DISTINCT app_id, app_version, os_version, coalesce(device, ''), kind
          FROM reports WHERE app_id = {app_id};
        INSERT INTO group_days (app_id, level, key, day, reports, users, first_seen, last_seen,
                                max_duration_ms, duration_hist)
        SELECT app_id, l, CASE l WHEN 1 THEN key1 ELSE key2 END, received_day, count(*),
               hll_add_agg(hll_hash_text(user_id), 12, 5, 1024, 0), min(received_at),
               max(received_at), max(duration_ms), '{{0,0,0,0,0,0,0,0}}'
          FROM reports r, (VALUES (1::smallint), (2::smallint)) AS v(l)
         WHERE r.app_id = {app_id} AND r.id <> {waiting['id']}
         GROUP BY 1, 2, 3, 4;
        INSERT INTO group_dim_days (app_id, level, key, day, combo, in_sample, reports, users,
                                    first_seen, last_seen, max_duration_ms, duration_hist)
        SELECT r.app_id, l, CASE l WHEN 1 THEN key1 ELSE key2 END, received_day, c.id,
               r.in_sample, count(*), hll_add_agg(hll_hash_text(user_id), 12, 5, 1024, 0),
               min(received_at), max(received_at), max(duration_ms), {one_or_none}
          FROM reports r JOIN dim_combos c ON c.app_id = r.app_id
           AND c.app_version = r.app_version AND c.os_version = r.os_version
           AND c.device = coalesce(r.device, '') AND c.kind = r.kind,
               (VALUES (1::smallint), (2::smallint)) AS v(l)
         WHERE r.app_id = {app_id} AND r.id <> {waiting['id']}
         GROUP BY 1, 2, 3, 4, 5, 6;
        INSERT INTO group_facet_days (app_id, level, key, day, dim, value, reports, users,
                                      affected, first_seen, last_seen, max_duration_ms,
                                      duration_hist)
        SELECT r.app_id, l, CASE l WHEN 1 THEN key1 ELSE key2 END, received_day, x.dim,
               x.value, count(*), hll_add_agg(hll_hash_text(user_id), 12, 5, 1024, 0), 0,
               min(received_at), max(received_at), max(duration_ms), {one_or_none}
          FROM reports r,
               LATERAL (VALUES ('version', r.app_version), ('os_version', r.os_version),
                               ('device', coalesce(r.device, '')), ('kind', r.kind)) AS x(dim, value),
               (VALUES (1::smallint), (2::smallint)) AS v(l)
         WHERE r.app_id = {app_id} AND r.id <> {waiting['id']}
         GROUP BY 1, 2, 3, 4, 5, 6;
        INSERT INTO groups (app_id, level, key, parent_key, frames, reports, users, users_hll,
                            first_seen, last_seen, max_duration_ms)
        SELECT app_id, level, key, NULL, '[]', sum(reports), 1, hll_union_agg(users),
               min(first_seen), max(last_seen), max(max_duration_ms)
          FROM group_days WHERE app_id = {app_id} GROUP BY 1, 2, 3""")
    assert "applied 044_duration_percentiles.sql" in migrate(url).stdout
    # The reads below fold first (conftest.psql): the waiting report is
    # counted then, once, since the migration left it out.
    counted = recs
    dims = {"day": "day", "version": "app_version", "os": "os_version", "device": "device",
            "kind": "kind"}
    tables = [("group_days", ("day",), ""), ("groups", (), ""),
              ("group_dim_days", ("day", "version", "os", "device", "kind"), "")]
    tables += [("group_facet_days", ("day", f), f" AND dim = '{dims[f]}'".replace(
        "'app_version'", "'version'")) for f in ("version", "os", "device", "kind")]
    for level in (1, 2):
        k = f"key{level}"
        for table, fields, where in tables:
            cols = ["value" if table == "group_facet_days" and f != "day" else dims[f]
                    for f in fields]
            stored = {}
            for line in psql(url, f"SELECT key, {''.join(c + ', ' for c in cols)}"
                                  "kept_fine_hist(duration_fine, max_duration_ms) FROM "
                                  f"{DIM_ROWS if table == 'group_dim_days' else table}"
                                  f" WHERE app_id = {app_id} AND level = {level}{where}"
                                  ).splitlines():
                *key, fine = line.split("|")
                pairs = [int(x) for x in fine.strip("{}").split(",") if x]
                stored[tuple(key)] = dict(zip(pairs[::2], pairs[1::2]))
            want = {}
            for r in counted:
                hist = want.setdefault((r[k],) + tuple(r[f] or "" for f in fields), {})
                if r["duration"] is not None:
                    b = fine_bucket(r["duration"])
                    hist[b] = hist.get(b, 0) + 1
            assert stored == want, (table, where, level)
    # Rows of one duration were left without a histogram, as 034 keeps them.
    assert psql(url, "SELECT count(*) FROM group_facet_days WHERE duration_fine IS NULL"
                     " AND max_duration_ms IS NOT NULL") != "0"
