"""SPEC §10.1, issue 26 item 1: per group and day the summed durations
(stall_ms), the longest (max_duration_ms) and a histogram of them
(duration_hist, lower bucket edges 0, 250, 500, 1000, 2000, 5000, 10000,
30000 ms), exact on every read path, under every filter, through
reprocessing, retention and the upgrade (schema/021).

Every expected value is computed here from the durations the test posted
(the bucket by bisect over the edges, not by the server's width_bucket)
and from the groups the server put each report in; the aggregate rows are
compared with our own SQL over the report rows."""

import random
import time

import pytest

from conftest import DIM_ROWS, create_app, migrate, psql, stallscope
from ingest_util import (EDGES, allow_everyone, fresh_id, ips, kscrash, metrickit, native, post,
                         severity)
from test_aggregates import old_database
from test_api_filters import (DAY, KINDS, OS_VERSIONS, VERSIONS, DEVICES, day_of, every_page,
                              get, image, matches, place, post_batch, post_over_days, query,
                              regroup, stacks_of, start)

assert image  # the dSYM fixture test_api_filters defines, shared

# Every edge and the value just below it, a huge one, and unknown (None).
DURATIONS = [0, 249, 250, 499, 500, 999, 1000, 1999, 2000, 4999, 5000, 9999, 10000, 29999,
             30000, 10 ** 9, None]


def shown(group):
    return {k: group[k] for k in ("stall_ms", "max_duration_ms", "duration_hist")}


def check_severity(server, app, recs, f):
    """Both levels' lists, every level-1 detail and its subgroups under the
    filters F say what the matching reports' durations make."""
    want_any = [r for r in recs if matches(r, f)]
    for level, key in ((1, "key1"), (2, "key2")):
        listed = get(server, app, f"/groups?level={level}&limit=500&{query(f)}")["groups"]
        want = {}
        for r in want_any:
            want.setdefault(r[key], []).append(r["duration"])
        assert {g["key"]: shown(g) for g in listed} == \
            {k: severity(d) for k, d in want.items()}, (level, f)
    for key1 in {r["key1"] for r in recs}:
        detail = get(server, app, f"/groups/{key1}?{query(f)}")
        rows = [r for r in want_any if r["key1"] == key1]
        assert shown(detail["group"]) == severity([r["duration"] for r in rows]), (key1, f)
        subs = {}
        for r in rows:
            subs.setdefault(r["key2"], []).append(r["duration"])
        assert {g["key"]: shown(g) for g in detail["subgroups"]} == \
            {k: severity(d) for k, d in subs.items()}, (key1, f)


def check_stall_sort(server, app, recs, f):
    """sort=stall_ms pages (two groups a page) list every matching group
    once, by summed durations, then key, both descending."""
    for level, key in ((1, "key1"), (2, "key2")):
        stall = {}
        for r in recs:
            if matches(r, f):
                stall[r[key]] = stall.get(r[key], 0) + (r["duration"] or 0)
        want = [k for k, _ in sorted(stall.items(), key=lambda kv: (kv[1], kv[0]),
                                     reverse=True)]
        keys = every_page(server, app, f"/groups?level={level}&sort=stall_ms&limit=2&{query(f)}",
                          "groups", "key")
        assert keys == want, (level, f)


FACET_COLUMNS = {"version": "app_version", "os_version": "os_version", "device": "device",
                 "kind": "kind"}


def severity_rows_agree(db, app_id):
    """Every aggregate row of APP_ID (group_days, group_dim_days,
    group_facet_days, both levels) and every group's all-time row hold the
    durations of the report rows they stand for, by our own SQL (the
    groups' rows of all days). A dimension or facet row that counts at most
    one duration keeps no histogram (schema/034): the bucket of its max."""
    bucket = " + ".join(f"(duration_ms >= {e})::int" for e in EDGES[1:])
    hist = ("ARRAY[" + ", ".join(f"count(duration_ms) FILTER (WHERE {bucket} = {i})"
                                 for i in range(len(EDGES))) + "]")
    ours_cols = f"coalesce(sum(duration_ms), 0), max(duration_ms), {hist}"
    kept_hist = "kept_duration_hist(duration_hist, max_duration_ms)"
    tables = [("group_days", ", day", "", "duration_hist"),
              ("group_dim_days", ", day, app_version, os_version, device, kind", "", kept_hist),
              ("groups", "", "", "duration_hist")]
    tables += [("group_facet_days", f", day, {column}", f" AND dim = '{dim}'", kept_hist)
               for dim, column in FACET_COLUMNS.items()]
    for table, dims, where, hist_read in tables:
        ours_dims = dims.replace(", day", ", received_day")
        for column in ("app_version", "os_version", "device"):
            ours_dims = ours_dims.replace(column, f"coalesce({column}, '')")
        # A facet row's dimension is its dim, its value the value column.
        kept_dims = ", day, value" if table == "group_facet_days" else dims
        for level, key in ((1, "key1"), (2, "key2")):
            rows = DIM_ROWS if table == "group_dim_days" else table
            kept = psql(db, f"SELECT key{kept_dims}, stall_ms, max_duration_ms, {hist_read}"
                            f" FROM {rows} WHERE app_id = {app_id} AND level = {level}"
                            f"{where} AND reports > 0 ORDER BY 1{kept_dims}")
            ours = psql(db, f"SELECT {key}{ours_dims}, {ours_cols} FROM reports"
                            f" WHERE app_id = {app_id} GROUP BY {key}{ours_dims}"
                            f" ORDER BY 1{ours_dims}")
            assert kept == ours, (table, where, level)


def served_over_three_days(db, tmp_root, image, rng, durations_of):
    """For a module fixture to yield from: an app and its reports received
    at three known times over three days, a batch each, of the durations
    DURATIONS_OF() gives, dimensions and users drawn with RNG; yields
    (server, app, records with their keys, the three days), then stops
    the server."""
    app = create_app(db)
    base = (int(time.time()) // DAY - 3) * DAY
    times = [base + 9 * 3600, base + DAY + 11 * 3600, base + 2 * DAY + 8 * 3600]
    stacks = stacks_of(image)
    recs = post_over_days(db, tmp_root, app, image, times, lambda i, at: [
        {"stack": rng.choice(stacks), "user": f"u{rng.randrange(6)}",
         "version": rng.choice(VERSIONS), "os": rng.choice(OS_VERSIONS),
         "device": rng.choice(DEVICES), "kind": rng.choice(KINDS), "at": at, "duration": d}
        for d in durations_of()], upload=True)
    server = start(db, tmp_root)
    place(server, app, recs)
    yield server, app, recs, [day_of(t) for t in times]
    assert server.stop() == 0


@pytest.fixture(scope="module")
def dataset(db, tmp_root, image):
    """Each batch holding every duration of DURATIONS twice (seeded)."""
    rng = random.Random(26)
    yield from served_over_three_days(db, tmp_root, image, rng,
                                      lambda: rng.sample(DURATIONS * 2, 2 * len(DURATIONS)))


FILTERS = lambda days: [{}, {"from": days[1]}, {"to": days[0]}, {"from": days[1], "to": days[1]},
                        {"version": "1.1"}, {"os_version": "17.2"}, {"device": "iPad13,1"},
                        {"device": ""}, {"kind": "hang"},
                        {"from": days[0], "to": days[1], "kind": "stall", "version": "1.0"}]


def test_durations_exact_on_every_read_path_and_filter(dataset):
    server, app, recs, days = dataset
    assert len({r["key1"] for r in recs}) >= 2 and len({r["key2"] for r in recs}) >= 3
    for f in FILTERS(days):
        assert any(matches(r, f) for r in recs), f
        check_severity(server, app, recs, f)


def test_edges_and_unknown_durations(dataset, db):
    """The edges fall in the bucket they start; reports without a duration
    count in reports only; a group none of whose matching reports has a
    duration shows 0, null and an empty histogram."""
    server, app, recs, days = dataset
    everything = get(server, app, "/groups?level=1&limit=500")["groups"]
    assert sum(g["reports"] for g in everything) == len(recs)
    total = [sum(col) for col in zip(*(g["duration_hist"] for g in everything))]
    assert total == [12] * 8  # two values a bucket, twice a batch, three batches
    assert sum(g["stall_ms"] for g in everything) == 3 * 2 * sum(d or 0 for d in DURATIONS)
    assert max(g["max_duration_ms"] or 0 for g in everything) == 10 ** 9
    key1 = recs[0]["key1"]
    empty = get(server, app, f"/groups/{key1}?version=9.9")["group"]
    assert (empty["reports"], shown(empty)) == (0, severity([]))
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    severity_rows_agree(db, app_id)


def test_rows_of_one_duration_keep_no_histogram(dataset, db):
    """A dimension or facet row made with a single duration (or none) stores
    no histogram, and every row of two or more durations keeps one; the
    rows (severity_rows_agree) and the lists
    (test_durations_exact_on_every_read_path_and_filter) read them back
    exactly."""
    server, app, recs, days = dataset
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    for table in ("group_dim_days", "group_facet_days"):
        rows = psql(db, f"SELECT duration_hist IS NULL,"
                        f" (SELECT sum(h) FROM unnest(kept_duration_hist(duration_hist,"
                        f"  max_duration_ms)) h) <= 1 FROM {table} WHERE app_id = {app_id}")
        pairs = {tuple(line.split("|")) for line in rows.splitlines()}
        assert {("t", "t"), ("f", "f")} <= pairs and ("t", "f") not in pairs, (table, pairs)


def test_sort_by_stall_ms_pages_in_order(dataset):
    server, app, recs, days = dataset
    for f in ({}, {"from": days[1]}, {"version": "1.0", "kind": "stall"}):
        check_stall_sort(server, app, recs, f)
    bad = server.request("GET", f"/api/v1/apps/{app['app']}/groups?sort=stall",
                         token=app["admin_token"])
    assert bad.status == 400 and "stall_ms" in bad.json["error"]["message"]


def test_reprocessing_moves_durations_exactly(db, tmp_root, image):
    """Reports stored before their dSYM share groups with reports of an
    image no dSYM serves (same name and offsets, another UUID). The dSYM
    moves the first ones, holding the longest durations, out of the
    shared group-days: sums, histograms and the max left behind (now the
    longest of the reports that stayed) stay exact."""
    app = create_app(db)
    other_uuid = "0F0F0F0F-1111-2222-3333-444444444444"
    base = (int(time.time()) // DAY - 1) * DAY
    stacks = stacks_of(image)
    stays = lambda n, d: d is not None and d < 5000 and n % 3 != 2
    # The longest durations (and one unknown) on the reports that move.
    batch_of = lambda i, at: [
        dict({"stack": stacks[n % 4], "user": f"u{n % 3}", "version": VERSIONS[n % 2],
              "os": "17.2", "device": "iPhone14,2", "kind": KINDS[n % 2], "at": at,
              "duration": d, "stays": stays(n, d)},
             **({"uuid": other_uuid} if stays(n, d) else {}))
        for n, d in enumerate(DURATIONS * 2)]
    recs = post_over_days(db, tmp_root, app, image, (base + 8 * 3600, base + DAY + 9 * 3600),
                          batch_of, upload=False)
    server = start(db, tmp_root)
    try:
        place(server, app, recs)
        movers = [r for r in recs if not r["stays"]]
        shared = {r["key1"] for r in movers} & {r["key1"] for r in recs if r["stays"]}
        assert shared, "a group-day both kinds share"
        check_severity(server, app, recs, {})
        regroup(server, app, image, movers)
        place(server, app, recs)
        assert {r["key1"] for r in movers}.isdisjoint(r["key1"] for r in recs if r["stays"])
        for f in ({}, {"from": day_of(base), "to": day_of(base)}, {"kind": "stall"}):
            check_severity(server, app, recs, f)
            check_stall_sort(server, app, recs, f)
        app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
        severity_rows_agree(db, app_id)
    finally:
        assert server.stop() == 0


def test_every_format_duration_reaches_stall_ms(db, make_server, image):
    """Native duration_ms, MetricKit hangDuration, KSCrash hang start/end
    and a watchdog .ips' allowance: each app's one group says it."""
    server = make_server()
    start_ns = 1_700_000_000_000_000_000
    ks = kscrash(fresh_id(), image, image.plain[:3])
    ks["crash"]["error"] = {"type": "hang", "hang": {"hang_start_nanos": start_ns,
                                                     "hang_end_nanos": start_ns + 2_750_400_000}}
    cases = [("/api/v1/ingest", native(fresh_id(), image, image.plain[:3], duration_ms=1234),
              1234),
             ("/api/v1/ingest/metrickit", metrickit(image, image.plain[:3]), 3000),  # "3 sec"
             ("/api/v1/ingest/kscrash", ks, 2750),
             ("/api/v1/ingest/ips",
              ips(fresh_id(), image, image.plain[:3],
                  reasons=["scene-update watchdog transgression: app exhausted real"
                           " (wall clock) time allowance of 19.97 seconds"]), 19970),
             ("/api/v1/ingest/ips", ips(fresh_id(), image, image.plain[:3]), None)]
    for path, body, duration in cases:
        app = create_app(db)
        allow_everyone(server, app)
        reply = post(server, app, path, body, user="u-1")
        assert reply.status == 202 and len(reply.json["accepted"]) == 1, (path, reply)
        rid = reply.json["accepted"][0]["id"]
        got = server.request("GET", f"/api/v1/reports/{rid}", token=app["admin_token"]).json
        assert got["duration_ms"] == duration, path
        for level in (1, 2):
            listed = get(server, app, f"/groups?level={level}")["groups"]
            assert [shown(g) for g in listed] == [severity([duration])], (path, level)


def test_durations_past_the_cap_are_refused_or_unknown(db, make_server, image):
    """No stall lasts 11.6 days (10^9 ms): a native report claiming longer
    is refused with a clear 400, and a KSCrash hang whose clocks say longer
    keeps no duration, so no client can overflow a group's all-time sum
    (SPEC §10.1 keeps it exactly, in 64 bits)."""
    server = make_server()
    app = create_app(db)
    allow_everyone(server, app)
    r = post(server, app, "/api/v1/ingest",
             native(fresh_id(), image, image.plain[:3], duration_ms=10 ** 9 + 1))
    assert r.status == 400 and r.error_code == "bad_field", r
    assert "duration_ms" in r.json["error"]["message"], r
    r = post(server, app, "/api/v1/ingest",
             native(fresh_id(), image, image.plain[:3], duration_ms=2 ** 53))
    assert r.status == 400 and r.error_code == "bad_field", r
    ks = kscrash(fresh_id(), image, image.plain[:3])
    start_ns = 1_700_000_000_000_000_000
    ks["crash"]["error"] = {"type": "hang", "hang": {
        "hang_start_nanos": start_ns, "hang_end_nanos": start_ns + (10 ** 9 + 1) * 10 ** 6}}
    r = post(server, app, "/api/v1/ingest/kscrash", ks, user="u-1")
    assert r.status == 202 and len(r.json["accepted"]) == 1, r
    rid = r.json["accepted"][0]["id"]
    got = server.request("GET", f"/api/v1/reports/{rid}", token=app["admin_token"]).json
    assert got.get("duration_ms") is None, got
    (listed,) = get(server, app, "/groups?level=1")["groups"]
    assert shown(listed) == severity([None])


def test_retention_keeps_the_durations_of_dropped_days(db, make_server, image):
    """A purge drops old days' reports; their groups' durations stay."""
    now = int(time.time())
    app = create_app(db)
    recs = []
    for age, durations in ((40, [700, None, 31000]), (1, [250, 9999])):
        s = make_server(env={"STALLSCOPE_FAKE_NOW": str(now - age * DAY)})
        allow_everyone(s, app, retention_days=60)
        batch = [{"stack": stacks_of(image)[0], "user": "u", "version": "1.0", "os": "17.2",
                  "device": "iPhone14,2", "kind": "stall", "at": now - age * DAY,
                  "duration": d} for d in durations]
        recs += post_batch(s, app, image, batch)
        place(s, app, recs)
        assert s.stop() == 0
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(now)})
    before = get(server, app, "/groups?level=1")["groups"]
    assert [shown(g) for g in before] == [severity([r["duration"] for r in recs])]
    allow_everyone(server, app, retention_days=7)
    # Alone: a server's own purge at its start may still be running.
    assert server.stop() == 0
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(now)})
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(now)})
    assert server.request("GET", f"/api/v1/reports/{recs[0]['id']}",
                          token=app["admin_token"]).status == 404
    assert get(server, app, "/groups?level=1")["groups"] == before
    old_day = day_of(now - 40 * DAY)
    check_severity(server, app, recs, {"from": old_day, "to": old_day})


def test_upgrade_backfills_from_the_stored_reports(cluster, tmp_path):
    """A database before 021 holding reports with and without durations
    (one day of them already dropped by retention) gets every group-day,
    dimension row and group's durations from its stored reports; the rows
    of the dropped day keep their reports with no durations."""
    url, _, app_id, recs = old_database(cluster, tmp_path, "it_migrate_severity", 21, 80,
                                        random.Random(21), lambda rng: rng.choice(DURATIONS))
    psql(url, f"""
        INSERT INTO group_dim_days (app_id, level, key, day, app_version, os_version, device,
                                    kind, reports, users, first_seen, last_seen)
        SELECT app_id, l, CASE l WHEN 1 THEN key1 ELSE key2 END, received_day,
               coalesce(app_version, ''), coalesce(os_version, ''), coalesce(device, ''), kind,
               count(*), hll_add_agg(hll_hash_text(user_id), 12, 5, 1024, 0), min(received_at),
               max(received_at)
          FROM reports, (VALUES (1::smallint), (2::smallint)) AS v(l)
         WHERE app_id = {app_id} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
        INSERT INTO group_days (app_id, level, key, day, reports, users, first_seen, last_seen)
        SELECT app_id, level, key, day, sum(reports), hll_union_agg(users), min(first_seen),
               max(last_seen) FROM group_dim_days WHERE app_id = {app_id} GROUP BY 1, 2, 3, 4;
        INSERT INTO groups (app_id, level, key, parent_key, frames, reports, users, users_hll,
                            first_seen, last_seen)
        SELECT app_id, level, key, CASE level WHEN 2 THEN 'k1?' END, '[]', sum(reports),
               hll_cardinality(hll_union_agg(users)), hll_union_agg(users), min(first_seen),
               max(last_seen) FROM group_days WHERE app_id = {app_id} GROUP BY 1, 2, 3;
        DROP TABLE reports_a{app_id}_20261110""")
    assert "applied 021_severity.sql" in migrate(url).stdout

    kept = [r for r in recs if r["day"] != "2026-11-10"]
    for level in (1, 2):
        k = f"key{level}"
        for table, fields in (("group_days", ("day",)),
                              ("group_dim_days", ("day", "version", "os", "device", "kind")),
                              ("groups", ())):
            cols = {"day": "day", "version": "app_version", "os": "os_version",
                    "device": "device", "kind": "kind"}
            stored = {}
            for line in psql(url, f"SELECT key, {''.join(cols[f] + ', ' for f in fields)}"
                                  "reports, stall_ms, max_duration_ms, duration_hist"
                                  f" FROM {DIM_ROWS if table == 'group_dim_days' else table}"
                                  f" WHERE app_id = {app_id} AND level = {level}").splitlines():
                *key, reports, stall, mx, hist = line.split("|")
                stored[tuple(key)] = (int(reports), {
                    "stall_ms": int(stall), "max_duration_ms": int(mx) if mx else None,
                    "duration_hist": [int(x) for x in hist.strip("{}").split(",")]})
            want = {}
            for r in recs:
                want.setdefault((r[k],) + tuple(r[f] or "" for f in fields), []).append(r)
            assert stored == {key: (len(rows), severity([r["duration"] for r in rows
                                                         if r in kept]))
                              for key, rows in want.items()}, (table, level)
