"""Issue 26 items 2 and 3, SPEC §10.2 (affected, rate) and §10.3 (version
order, first/last version, new_in, GET …/compare).

Every expectation is computed here from what the test sent: who checked
in with which version on which day, whose reports the SPEC's policy
stores (sampling by XXH3 through libxxhash and ctypes, the whitelist, the
daily quota), and the groups the server put each report in (GET
/api/v1/reports/{id}). The version order is re-implemented here from its
definition (docs/TRIAGE.md), the verdicts from the two-proportion z-test
with Python's statistics.NormalDist."""

import json
import math
import random
import re
import shutil
import statistics
import time
import urllib.parse

import pytest

from conftest import DIM_ROWS, REPO, create_app, fixture_of, migrate, psql, stallscope
from ingest_util import Image, allow_everyone, fresh_id, native, post
from test_activity import check_in, is_sampled, whitelist
from test_aggregates import ingest_users, move_hot_to_cool, recount_setup
from test_api_filters import day_of

DAY = 86400
NOON = 1795176000  # 2026-11-20T12:00:00Z


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def get(server, app, path, **q):
    query = urllib.parse.urlencode({k: v for k, v in q.items() if v is not None})
    r = server.request("GET", f"/api/v1/apps/{app['app']}/{path}"
                       + ("?" + query if query else ""), token=app["admin_token"])
    assert r.status == 200, r
    return r.json


def listed_groups(server, app, level=1, **q):
    return {g["key"]: g for g in get(server, app, "groups", level=level, limit=500,
                                     **q)["groups"]}


def keys_of(server, app, report_id):
    r = server.request("GET", f"/api/v1/reports/{report_id}", token=app["admin_token"])
    assert r.status == 200, r
    return r.json["key1"], r.json["key2"]


def post_many(server, app, image, reports):
    """Posts REPORTS (dicts: stack, user, version) in one request, all to
    be stored; returns their ids."""
    bodies = [native(fresh_id(), image, r["stack"], user=r["user"], app_version=r["version"])
              for r in reports]
    reply = post(server, app, "/api/v1/ingest", {"reports": bodies})
    assert reply.status == 202 and not reply.json["rejected"], reply
    return [a["id"] for a in reply.json["accepted"]]


# ---- §10.2: affected and rate ------------------------------------------------------------

RATE, QUOTA = 0.5, 2
VERSIONS = ("2.9", "2.10")


class World:
    """What the server must count: activity per (day, version) and stored
    reports as (day, user, version, key1, key2)."""

    def __init__(self, bundle, vips):
        self.bundle, self.vips = bundle, vips
        self.active = {}  # (day, version) -> users
        self.stored = []
        self.used = {}    # (day, user) -> reports the quota counted

    def in_sample(self, user, day):
        return user not in self.vips and is_sampled(self.bundle, user, day, RATE)

    def status(self, user, day):
        if user in self.vips:
            return 202
        if not is_sampled(self.bundle, user, day, RATE):
            return 403
        if self.used.get((day, user), 0) >= QUOTA:
            return 429
        self.used[(day, user)] = self.used.get((day, user), 0) + 1
        return 202

    def sampled(self, days, version):
        return sum(len({u for u in users if self.in_sample(u, d)})
                   for (d, v), users in self.active.items()
                   if d in days and version in (None, v))

    def affected(self, level, key, days, version):
        return len({(user, d) for (d, user, v, k1, k2) in self.stored
                    if (k1 if level == 1 else k2) == key and d in days
                    and version in (None, v) and user not in self.vips})


def expect_group(world, g, level, days, version):
    affected = world.affected(level, g["key"], days, version)
    sampled = world.sampled(days, version)
    assert g["affected"] == affected, (g["key"], days, version)
    if sampled == 0:
        assert g["rate"] is None
    else:
        assert g["rate"] == pytest.approx(affected / sampled, rel=1e-12), (g, sampled)


def build_world(make_server, app, image, days):
    """Two days of check-ins and uploads; returns the World and the
    stacks' level-1 keys."""
    vips = {"vip-0", "vip-1", "vip-2"}
    world = World(app["app"], vips)
    f = image.by_function
    # Two stacks share their innermost two frames (one level-1 group, two
    # level-2 groups); the third is a group of its own.
    stacks = [[f[1], f[2], f[3]], [f[1], f[2], f[4]], [f[5], f[6]]]
    rng = random.Random(26)
    users = [f"user-{i}" for i in range(50)] + sorted(vips)
    first = True
    for di, t in enumerate(days):
        day = day_of(t)
        server = make_server(env={"STALLSCOPE_FAKE_NOW": str(t)})
        if first:
            allow_everyone(server, app, sample_rate=RATE, daily_quota=QUOTA)
            for vip in vips:
                whitelist(server, app, vip)
            first = False
        for i, user in enumerate(users):
            if i % 6 == 5:
                continue  # never checks in: counted by their reports only
            version = VERSIONS[(i + di) % 2]
            check_in(server, app, user, version)
            world.active.setdefault((day, version), set()).add(user)
            if i % 4 == 0:
                other = VERSIONS[(i + di + 1) % 2]
                check_in(server, app, user, other)
                world.active.setdefault((day, other), set()).add(user)
        for i, user in enumerate(users):
            for _ in range(rng.randrange(0, 4)):  # up to 3: past the quota of 2
                version = rng.choice(VERSIONS)
                stack = rng.choice(stacks)
                want = world.status(user, day)
                r = post(server, app, "/api/v1/ingest",
                         native(fresh_id(), image, stack, user=user, app_version=version))
                assert r.status == want, (user, day, r)
                if want == 202:
                    k1, k2 = keys_of(server, app, r.json["accepted"][0]["id"])
                    world.stored.append((day, user, version, k1, k2))
                    world.active.setdefault((day, version), set()).add(user)
        server.stop()
    return world


def test_affected_and_rate_under_filters(db, make_server, image):
    app = create_app(db)
    days = (NOON - DAY, NOON)
    world = build_world(make_server, app, image, days)
    d1, d2 = day_of(days[0]), day_of(days[1])
    # The data holds what the rules are about.
    assert any(u in world.vips for (_, u, _, _, _) in world.stored)
    assert any(n == QUOTA for n in world.used.values())
    assert len({k1 for (_, _, _, k1, _) in world.stored}) == 2
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    for q, days_in, version in [({}, {d1, d2}, None),
                                ({"from": d2}, {d2}, None),
                                ({"to": d1}, {d1}, None),
                                ({"version": "2.10"}, {d1, d2}, "2.10"),
                                ({"version": "2.9", "from": d1, "to": d1}, {d1}, "2.9"),
                                ({"version": "7.7"}, {d1, d2}, "7.7"),
                                # Every report is of this OS and device: the
                                # same numbers, from the dimension rows.
                                ({"os_version": "17.2"}, {d1, d2}, None),
                                ({"device": "iPhone14,2", "version": "2.10", "from": d2},
                                 {d2}, "2.10")]:
        for level in (1, 2):
            got = listed_groups(server, app, level=level, **q)
            want_keys = {(k1 if level == 1 else k2) for (d, _, v, k1, k2) in world.stored
                         if d in days_in and version in (None, v)}
            assert set(got) == want_keys, q
            for g in got.values():
                expect_group(world, g, level, days_in, version)
        for key1 in {k1 for (_, _, _, k1, _) in world.stored}:
            detail = get(server, app, f"groups/{key1}", **q)
            expect_group(world, detail["group"], 1, days_in, version)
            for sub in detail["subgroups"]:
                expect_group(world, sub, 2, days_in, version)
    # The stats reply is compact JSON, as every other reply.
    r = server.request("GET", f"/api/v1/apps/{app['app']}/stats", token=app["admin_token"])
    assert r.status == 200 and r.json["days"], r
    # (Not byte-equal to Python's dump: jansson writes a real with 17
    # digits where Python writes the shortest that reads back the same.)
    assert b" " not in r.raw and r.json == json.loads(r.raw), r.raw
    # Kept through retention: the reports' partitions go, the counts stay.
    before = listed_groups(server, app)
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(NOON + 30 * DAY)})
    assert psql(db, f"SELECT count(*) FROM reports r JOIN apps a ON a.id = r.app_id"
                    f" WHERE a.bundle_id = '{app['app']}'") == "0"
    after = listed_groups(server, app)
    assert {k: (g["affected"], g["rate"]) for k, g in after.items()} == \
        {k: (g["affected"], g["rate"]) for k, g in before.items()}


# ---- §10.3: version order, first/last version, new_in ------------------------------------

def order_key(version, build=""):
    """docs/TRIAGE.md's order, written from its words: dot-separated parts,
    each runs of digits (numbers) and other runs (text, by bytes, after
    numbers); shorter first; then the build the same way."""
    def parts(s):
        if not s:
            return []
        return [[(0, int(run)) if run.isdigit() else (1, run.encode())
                 for run in re.findall(r"[0-9]+|[^0-9]+", p)] for p in s.split(".")]
    return (parts(version), parts(build))


def test_version_order_of_the_sort_key(db):
    pairs = [("2.9", ""), ("2.10", ""), ("2.9-beta", ""), ("2.9.1", ""), ("2.9", "100"),
             ("2.9", "99"), ("2.9", "99a"), ("2.10", "7"), ("1.0", ""), ("1.0.0", ""),
             ("1.0", "5"), ("10.0", ""), ("9.99", ""), ("2.9b", ""), ("2.9a", ""),
             ("", ""), ("", "3"), ("1..2", ""), ("1.0.2", ""), ("2.010.1", ""),
             ("3.0rc1", ""), ("3.0rc2", ""), ("3.0rc10", ""), ("3.0", "1.2"),
             ("3.0", "1.10")]
    random.Random(3).shuffle(pairs)
    values = ", ".join(f"('{v}', '{b}')" for v, b in pairs)
    got = psql(db, f"SELECT v || '|' || b FROM (VALUES {values}) AS x(v, b)"
                   f" ORDER BY app_version_key(v, b), v COLLATE \"C\", b COLLATE \"C\"")
    want = sorted(pairs, key=lambda p: (order_key(*p), p[0].encode(), p[1].encode()))
    assert got.splitlines() == [f"{v}|{b}" for v, b in want]
    # The cases the SPEC names, stated outright as well.
    index = {p: i for i, p in enumerate(want)}
    assert index[("2.9", "")] < index[("2.10", "")]
    assert index[("2.9", "99")] < index[("2.9", "100")] < index[("2.10", "")]
    assert index[("2.9.1", "")] < index[("2.9-beta", "")] < index[("2.10", "")]
    assert index[("1.0", "5")] < index[("1.0.0", "")]
    assert index[("3.0rc2", "")] < index[("3.0rc10", "")]


def test_first_last_version_and_new_in(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    f = image.by_function
    stacks = {"a": [f[10], f[11]], "b": [f[12], f[13]], "c": [f[14], f[15]],
              "d": [f[16], f[17]]}
    sent = {"a": ["2.10", "2.9", "2.9"], "b": ["2.10"], "c": ["2.9-beta", "2.9.1"],
            "d": [None]}
    key_of, versions_of = {}, {}
    for name, versions in sent.items():
        for i, v in enumerate(versions):
            body = native(fresh_id(), image, stacks[name], user=f"u-{name}-{i}")
            if v is None:
                del body["app_version"]
            else:
                body["app_version"] = v
            r = post(server, app, "/api/v1/ingest", body)
            assert r.status == 202, r
            key_of[name] = keys_of(server, app, r.json["accepted"][0]["id"])[0]
            versions_of.setdefault(name, []).append(v)
    assert len(set(key_of.values())) == 4

    def check():
        every = [v for vs in versions_of.values() for v in vs if v]
        newest = max(every, key=order_key)
        got = listed_groups(server, app)
        for name, key in key_of.items():
            known = [v for v in versions_of[name] if v]
            first = min(known, key=order_key) if known else None
            last = max(known, key=order_key) if known else None
            g = got[key]
            assert (g["first_version"], g["last_version"]) == (first, last), name
            assert g["new_in"] == (first if first == newest else None), name
            detail = get(server, app, f"groups/{key}")["group"]
            assert (detail["first_version"], detail["last_version"], detail["new_in"]) == \
                (g["first_version"], g["last_version"], g["new_in"])
        return got

    got = check()
    assert got[key_of["b"]]["new_in"] == "2.10"  # 2.10 after 2.9 and 2.9-beta
    assert got[key_of["a"]]["first_version"] == "2.9"
    # A newer version: b is no longer new, a now lasts to it.
    r = post(server, app, "/api/v1/ingest",
             native(fresh_id(), image, stacks["a"], user="late", app_version="2.11"))
    assert r.status == 202, r
    versions_of["a"].append("2.11")
    got = check()
    assert got[key_of["b"]]["new_in"] is None
    assert got[key_of["a"]]["last_version"] == "2.11"
    # Filters narrow the counts, not a group's versions.
    filtered = listed_groups(server, app, version="2.9")
    assert filtered[key_of["a"]]["first_version"] == "2.9"
    assert filtered[key_of["a"]]["last_version"] == "2.11"


# ---- §10.3: compare ----------------------------------------------------------------------

def z_test_p(x1, n1, x2, n2):
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = (x1 + x2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var <= 0:
        return 1.0
    z = (x2 / n2 - x1 / n1) / math.sqrt(var)
    return 2 * (1 - statistics.NormalDist().cdf(abs(z)))


def verdict(base_reports, base, target):
    (xa, na), (xb, nb) = base, target
    if base_reports == 0 and xb >= 5:
        return "new"
    if z_test_p(xa, na, xb, nb) < 0.01:
        if xb * na >= 1.5 * xa * nb:
            return "worse"
        if xb * na * 1.5 <= xa * nb:
            return "better"
    return "same"


def test_compare_verdicts(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    base_users = [f"b-{i}" for i in range(400)]
    target_users = [f"t-{i}" for i in range(400)]
    for u in base_users:
        check_in(server, app, u, "3.0")
    for u in target_users:
        check_in(server, app, u, "3.1")
    for vip in ("vip-a", "vip-b"):
        whitelist(server, app, vip)
    f = image.by_function
    # name: (stack, affected users in 3.0, in 3.1)
    plan = {"same": ([f[20], f[21]], 20, 20), "worse": ([f[22], f[23]], 10, 30),
            "new": ([f[24], f[25]], 0, 6), "rare": ([f[26], f[27]], 1, 3),
            "better": ([f[28], f[29]], 30, 10), "listed": ([f[30], f[31]], 0, 6)}
    reports, base_reports = [], {}
    for name, (stack, in_base, in_target) in plan.items():
        # Each affected user reports twice: user-days, not reports, count.
        for u in base_users[:in_base] * 2:
            reports.append({"stack": stack, "user": u, "version": "3.0", "name": name})
        for u in target_users[-in_target:] * 2 if in_target else []:
            reports.append({"stack": stack, "user": u, "version": "3.1", "name": name})
    # Whitelisted users' reports: in "listed"'s base (a report in A, no
    # affected user) and in "worse"'s target (no affected user more).
    for vip in ("vip-a", "vip-b"):
        reports.append({"stack": plan["listed"][0], "user": vip, "version": "3.0",
                        "name": "listed"})
        reports.append({"stack": plan["worse"][0], "user": vip, "version": "3.1",
                        "name": "worse"})
    # Another version's group is in neither side.
    reports.append({"stack": [f[32], f[33]], "user": "b-0", "version": "2.0", "name": "old"})
    key_of = {}
    for i in range(0, len(reports), 100):
        chunk = reports[i:i + 100]
        for r, rid in zip(chunk, post_many(server, app, image, chunk)):
            if r["name"] not in key_of:
                key_of[r["name"]] = keys_of(server, app, rid)[0]
    assert len(set(key_of.values())) == len(plan) + 1
    for r in reports:
        if r["version"] == "3.0":
            base_reports[r["name"]] = base_reports.get(r["name"], 0) + 1
    vips = {"vip-a", "vip-b"}
    sampled = {"3.0": len(base_users), "3.1": len(target_users)}

    def affected(name, version):
        return len({r["user"] for r in reports if r["name"] == name
                    and r["version"] == version and r["user"] not in vips})

    got = get(server, app, "compare", base="3.0", target="3.1")["groups"]
    want = []
    for name in plan:
        base = (affected(name, "3.0"), sampled["3.0"])
        target = (affected(name, "3.1"), sampled["3.1"])
        want.append({"key": key_of[name], "name": name,
                     "base": {"affected": base[0], "sampled": base[1],
                              "rate": base[0] / base[1]},
                     "target": {"affected": target[0], "sampled": target[1],
                                "rate": target[0] / target[1]},
                     "verdict": verdict(base_reports.get(name, 0), base, target),
                     "score": target[0] - base[0] * target[1] / base[1]})
    want.sort(key=lambda w: (-w["score"], w["key"]))
    assert [g["key"] for g in got] == [w["key"] for w in want]
    for g, w in zip(got, want):
        assert g["frames"] and all(isinstance(x, str) for x in g["frames"])
        for side in ("base", "target"):
            assert g[side]["affected"] == w[side]["affected"], (w["name"], side)
            assert g[side]["sampled"] == w[side]["sampled"]
            assert g[side]["rate"] == pytest.approx(w[side]["rate"], rel=1e-12)
        assert g["verdict"] == w["verdict"], w["name"]
    # Every verdict the SPEC names is reached, each where the data says.
    by_name = {w["name"]: g["verdict"] for g, w in zip(got, want)}
    assert by_name == {"same": "same", "worse": "worse", "new": "new", "rare": "same",
                       "better": "better", "listed": "same"}
    # A day range without reports: no group; a version nobody checked in
    # with: its rate null (2.0's one user is active through the report).
    assert get(server, app, "compare", base="3.0", target="3.1", **{"from": day_of(
        NOON + DAY)})["groups"] == []
    alone = get(server, app, "compare", base="9.9", target="2.0")["groups"]
    assert [(g["key"], g["base"]["rate"], g["target"]["rate"], g["verdict"])
            for g in alone] == [(key_of["old"], None, 1.0, "same")]
    for q in ("target=3.1", "base=3.0", "base=&target=3.1", "base=3.0&target=3.1&from=x"):
        r = server.request("GET", f"/api/v1/apps/{app['app']}/compare?{q}",
                           token=app["admin_token"])
        assert r.status == 400 and r.error_code == "bad_query", (q, r)


# ---- reprocessing ------------------------------------------------------------------------

def test_late_dsym_moves_affected_exactly(db, make_server, image):
    """Reports stored before their dSYM group by offsets; once it arrives
    they move to their symbolized groups, and affected follows them: the
    whitelisted user's reports stay out of it on both sides."""
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app)
    whitelist(server, app, "vip")
    f = image.by_function
    stacks = [[f[40], f[41], f[42]], [f[40], f[41], f[43]], [f[44], f[45]]]
    reports = []
    for i in range(30):
        user = "vip" if i % 7 == 0 else f"u-{i % 11}"
        reports.append({"stack": stacks[i % 3], "user": user,
                        "version": ("4.0", "4.1")[i % 2]})
    ids = post_many(server, app, image, reports)
    for u in {r["user"] for r in reports}:
        check_in(server, app, u, "4.0")
    before = {keys_of(server, app, i) for i in ids}
    assert server.upload(app, image.dwarf).status in (200, 201)

    def moved():
        now = [keys_of(server, app, i) for i in ids]
        return now if not set(now) & before else None
    placed = None
    deadline = time.time() + 20
    while placed is None and time.time() < deadline:
        placed = moved()
        time.sleep(0.2)
    assert placed, "the reports were not reprocessed"
    day = day_of(NOON)
    sampled = {"4.0": len({r["user"] for r in reports} - {"vip"}),
               "4.1": len({r["user"] for r in reports if r["version"] == "4.1"} - {"vip"})}
    for version, os_version in ((None, None), ("4.0", None), ("4.1", None), (None, "17.2"),
                                ("4.1", "17.2")):
        for level in (1, 2):
            got = listed_groups(server, app, level=level, version=version,
                                os_version=os_version)
            want = {}
            for r, keys in zip(reports, placed):
                if version in (None, r["version"]):
                    want.setdefault(keys[level - 1], set())
                    if r["user"] != "vip":
                        want[keys[level - 1]].add((r["user"], day))
            assert {k: g["affected"] for k, g in got.items()} == \
                {k: len(v) for k, v in want.items()}, (version, level)
            denominator = sum(n for v, n in sampled.items() if version in (None, v))
            for k, g in got.items():
                assert g["rate"] == pytest.approx(len(want[k]) / denominator, rel=1e-12)


# ---- migration 023 -----------------------------------------------------------------------

def test_migration_splits_whitelisted_users_out(cluster, tmp_path):
    """023 decides which stored reports were in the sample from the
    whitelist as it is (an entry created at or before the report and not
    expired then) and splits those group-days' dimension rows; the lists'
    sums stay the same, affected leaves the whitelisted users out."""
    url = cluster.create_db("it_migrate_023")
    older = tmp_path / "schema"
    (older / "functions").mkdir(parents=True)
    for f in (REPO / "schema").glob("*.sql"):
        if int(f.name.split("_")[0]) < 23:
            shutil.copy(f, older)
    migrate(url, extra_env={"STALLSCOPE_SCHEMA_DIR": str(older)})
    bundle = create_app(url)["app"]
    app = psql(url, f"SELECT id FROM apps WHERE bundle_id = '{bundle}'").strip()
    at = "timestamptz '2026-11-20 12:00:00+00'"
    psql(url, f"""
        INSERT INTO whitelist (app_id, user_id, created_at, expires_at) VALUES
          ({app}, 'vip', {at} - interval '1 day', NULL),
          ({app}, 'expired', {at} - interval '2 days', {at} - interval '1 day'),
          ({app}, 'later', {at} + interval '1 hour', NULL)""")
    # user, key1, key2, version, seconds after noon
    rows = [("u1", "k1", "k1a", "1.0", 0), ("vip", "k1", "k1a", "1.0", 1),
            ("vip", "k1", "k1b", "1.0", 2), ("expired", "k1", "k1a", "1.0", 3),
            ("later", "k1", "k1a", "1.0", 4), ("u2", "k2", "k2a", "1.0", 5),
            ("vip", "k2", "k2a", "2.0", 6), ("u1", "k1", "k1a", "1.0", 7)]
    listed = {"vip"}
    psql(url, f"SELECT ensure_report_partition({app}, DATE '2026-11-20')")
    for i, (user, k1, k2, version, s) in enumerate(rows):
        psql(url, f"""
            INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id,
                                 kind, source, app_version, key1, key2, pending, raw,
                                 symbolized)
            VALUES ({i + 1}, {app}, '2026-11-20', {at} + interval '{s} seconds', 'r{i}',
                    '{user}', 'stall', 'native', '{version}', '{k1}', '{k2}', false, '{{}}',
                    '{{}}')""")
    # The dimension rows as ingest kept them before 023.
    psql(url, """
        INSERT INTO group_dim_days (app_id, level, key, day, app_version, os_version, device,
                                    kind, reports, users, first_seen, last_seen)
        SELECT app_id, l, CASE l WHEN 1 THEN key1 ELSE key2 END, received_day, app_version,
               '', '', kind, count(*), hll_add_agg(hll_hash_text(user_id), 12, 5, 1024, 0),
               min(received_at), max(received_at)
          FROM reports, generate_series(1, 2) AS l GROUP BY 1, 2, 3, 4, 5, 8""")
    sums = """SELECT level, key, app_version, sum(reports), hll_cardinality(hll_union_agg(users)),
                     min(first_seen), max(last_seen)
                FROM {} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"""
    before = psql(url, sums.format("group_dim_days"))
    assert "applied 023_" in migrate(url).stdout
    assert psql(url, sums.format(DIM_ROWS)) == before
    assert psql(url, "SELECT string_agg(user_id, ',' ORDER BY id) FROM reports"
                     " WHERE NOT in_sample") == ",".join(u for (u, *_) in rows if u in listed)
    split = psql(url, f"""SELECT level, key, app_version, in_sample, reports,
                                 hll_cardinality(users)::int
                            FROM {DIM_ROWS} ORDER BY 1, 2, 3, 4""")
    want = {}
    for (user, k1, k2, version, _) in rows:
        for level, key in ((1, k1), (2, k2)):
            n, users = want.get((level, key, version, user not in listed), (0, set()))
            want[(level, key, version, user not in listed)] = (n + 1, users | {user})
    assert split.splitlines() == [
        f"{lv}|{k}|{v}|{'t' if s else 'f'}|{n}|{len(u)}"
        for (lv, k, v, s), (n, u) in sorted(want.items())]
    # Per group, day and version: every report, the in-sample users (023's
    # group_version_days, kept by 025 as group_facet_days' version rows).
    per_version = psql(url, """SELECT level, key, value, reports, affected,
                                      hll_cardinality(coalesce(sample_users, users))::int
                                 FROM group_facet_days WHERE dim = 'version'
                                ORDER BY 1, 2, 3""")
    versions = {}
    for (lv, k, v, s), (n, u) in want.items():
        reports, users = versions.get((lv, k, v), (0, set()))
        versions[(lv, k, v)] = (reports + n, users | (u if s else set()))
    assert per_version.splitlines() == [
        f"{lv}|{k}|{v}|{n}|{len(u)}|{len(u)}" for (lv, k, v), (n, u) in sorted(versions.items())]


def test_big_group_day_recount_keeps_whitelisted_users_out(cluster, make_server, tmp_path):
    """A group-day of over 1,000 reports is recounted after the moves
    (recount_group_day): its dimension rows are recounted per in_sample,
    so affected stays exact for the group moved from and the one moved to."""
    db, server, app, app_id, version = recount_setup(cluster, make_server,
                                                     "it_recount_in_sample")
    vips = {f"user-{i}" for i in range(5, 15)}
    for vip in vips:
        whitelist(server, app, vip)
    ingest_users(db, app_id, version, "hot", 1, 1010)
    moved = [f"user-{i}" for i in range(1, 11)]
    move_hot_to_cool(db, app_id, moved)
    everyone = {f"user-{i}" for i in range(1, 1011)}
    want = {"hot": len(everyone - set(moved) - vips), "cool": len(set(moved) - vips)}

    def affected():
        return {lv: {k: g["affected"] for k, g in listed_groups(server, app, level=lv).items()}
                for lv in (1, 2)}
    assert affected()[1]["cool"] == want["cool"]
    stallscope("reprocess", db_url=db, extra_env={"STALLSCOPE_DATA_DIR": str(tmp_path)})
    assert affected() == {1: want, 2: {f"{k}-2": n for k, n in want.items()}}
