"""Issue 42: GET …/groups/{key1}/breakdown (SPEC §10.6) — how a group's
reports split by app version, OS version, device and kind, under the
group page's filters, of the group or of one of its level-2 groups.

Every expectation is computed here from the reports the test posted (when,
by whom, with which dimensions; servers whose clock is set with
STALLSCOPE_FAKE_NOW receive them on known days) and the groups the server
put each report in (GET /api/v1/reports/{id}): the top 10 values of each
dimension by reports (ties by value), one "value": null row for the rest,
share = reports ÷ the matching reports, users distinct (whitelisted users
included). A report without an OS version or device shows as the value
"", as the filters name it. The answer comes from the aggregates: it
stays the same once the report rows are gone."""

import time

import pytest

from conftest import create_app, fixture_of, psql
from ingest_util import Image, allow_everyone, fresh_id, native, post
from test_activity import whitelist
from test_api_filters import day_of, place, query, stacks_of, start

DAY = 86400
TOP = 10
# 13 app versions, so the version breakdown has a rest row; counts chosen
# with ties (ordered by value) and a tail of small ones.
VERSION_COUNTS = {"1.0": 9, "1.1": 7, "1.10": 7, "1.2": 6, "2.0": 5, "2.1": 4, "2.2": 4,
                  "3.0": 3, "3.1": 2, "3.2": 2, "3.3": 1, "4.0": 1, "4.1": 1}
OS_VERSIONS = ("16.4", "17.2", "17.4", None)  # None: the report names none
DEVICES = ("iPhone14,2", "iPad13,1", "iPhone15,3", None)
KINDS = ("stall", "hang", "cpu")
VIPS = ("vip-a", "vip-b")  # whitelisted: stored whatever the sampling
USERS = ("u0", "u1", "u2", "u3", "u4", "u5") + VIPS
# The breakdown's dimension → the posted report's field.
FIELDS = {"app_version": "version", "os_version": "os", "device": "device", "kind": "kind"}
FILTER_FIELD = {"version": "version", "os_version": "os", "device": "device", "kind": "kind"}


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def post_reports(server, app, image, reports):
    """Posts REPORTS (dicts: stack, user, version, os, device, kind; None
    leaves the field out) in one request; adds each stored report's id."""
    bodies = []
    for r in reports:
        body = native(fresh_id(), image, r["stack"], user=r["user"], kind=r["kind"],
                      app_version=r["version"], os_version=r["os"], device=r["device"])
        for field in ("os_version", "device"):
            if body[field] is None:
                del body[field]
        bodies.append(body)
    reply = post(server, app, "/api/v1/ingest", {"reports": bodies})
    assert reply.status == 202 and not reply.json["rejected"], reply
    for r, accepted in zip(reports, reply.json["accepted"]):
        r["id"] = accepted["id"]
    return reports


def plan(image):
    """The reports to post, each with its day (0 or 1): every version its
    count, the other dimensions and the user cycling at different paces,
    two stacks of one level-1 group (two level-2 groups), and a few
    reports of another level-1 group."""
    stacks = stacks_of(image)
    recs = []
    i = 0
    for version, n in VERSION_COUNTS.items():
        for _ in range(n):
            recs.append({"stack": stacks[1 + i % 2], "user": USERS[i % len(USERS)],
                         "version": version, "os": OS_VERSIONS[i % 4 if i % 7 else 1],
                         "device": DEVICES[(i // 2) % 4], "kind": KINDS[i % 3],
                         "day": i % 3 == 0})
            i += 1
    for j in range(4):
        recs.append({"stack": stacks[0], "user": USERS[j], "version": "1.0", "os": "17.2",
                     "device": "iPhone14,2", "kind": "stall", "day": j % 2})
    return recs


@pytest.fixture(scope="module")
def dataset(db, tmp_root, image):
    """The planned reports posted on two days (the first server makes the
    app sample everyone and whitelists the VIPs); returns (server, app,
    recs, days), the server one of today, stopped at the end."""
    app = create_app(db)
    base = (int(time.time()) // DAY - 2) * DAY
    times = (base + 10 * 3600, base + DAY + 14 * 3600)
    recs = plan(image)
    for day, at in enumerate(times):
        server = start(db, tmp_root, at)
        if day == 0:
            allow_everyone(server, app, retention_days=30)
            for vip in VIPS:
                whitelist(server, app, vip)
        batch = [r for r in recs if r["day"] == day]
        for r in post_reports(server, app, image, batch):
            r["at"] = at
        assert server.stop() == 0
    server = start(db, tmp_root)
    place(server, app, recs)
    yield server, app, recs, [day_of(t) for t in times]
    assert server.stop() == 0


def matching(recs, f):
    day_from, day_to = f.get("from"), f.get("to")
    out = []
    for r in recs:
        day = day_of(r["at"])
        if day_from and day < day_from or day_to and day > day_to:
            continue
        if all((r[FILTER_FIELD[k]] or "") == v for k, v in f.items()
               if k in FILTER_FIELD):
            out.append(r)
    return out


def row(value, rows, n):
    return {"value": value, "reports": len(rows), "users": len({r["user"] for r in rows}),
            "share": pytest.approx(len(rows) / n, rel=1e-12)}


def expected(rows):
    """The breakdown of ROWS, the matching reports."""
    n = len(rows)
    by = {}
    for dim, field in FIELDS.items():
        values = {}
        for r in rows:
            values.setdefault(r[field] or "", []).append(r)
        ranked = sorted(values.items(), key=lambda kv: (-len(kv[1]), kv[0].encode()))
        by[dim] = [row(v, rs, n) for v, rs in ranked[:TOP]]
        if len(ranked) > TOP:
            by[dim].append(row(None, [r for _, rs in ranked[TOP:] for r in rs], n))
    return {"reports": n, "users": len({r["user"] for r in rows}), "by": by}


def breakdown(server, app, key1, f=None):
    """The reply, its JSON without "as_of" (SPEC §12: every aggregate read
    says how current it is; test_read_replica.py checks its value)."""
    f = dict(f or {})
    r = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{key1}/breakdown?"
                       + query(f), token=app["admin_token"])
    if r.status == 200:
        assert r.json.pop("as_of"), r
    return r


def the_group(recs):
    """The level-1 group with two level-2 groups, its reports."""
    key1 = max({r["key1"] for r in recs}, key=lambda k: sum(r["key1"] == k for r in recs))
    return key1, [r for r in recs if r["key1"] == key1]


def filters(days):
    return [{}, {"from": days[1]}, {"to": days[0]}, {"version": "1.0"}, {"device": ""},
            {"os_version": "17.2", "kind": "hang"}, {"kind": "cpu", "from": days[1]},
            {"version": "2.0", "device": "iPad13,1", "os_version": "16.4", "kind": "stall"},
            {"version": "9.9"}]


def check_all(server, app, recs, days):
    key1, mine = the_group(recs)
    key2s = sorted({r["key2"] for r in mine})
    assert len(key2s) == 2
    for f in filters(days):
        got = breakdown(server, app, key1, f)
        assert got.status == 200, (f, got)
        assert got.json == expected(matching(mine, f)), f
        for key2 in key2s:
            got = breakdown(server, app, key1, {**f, "level2": key2})
            assert got.status == 200, (f, key2, got)
            assert got.json == expected(matching([r for r in mine if r["key2"] == key2], f)), \
                (f, key2)


def test_breakdown_by_each_dimension_under_the_filters(dataset):
    server, app, recs, days = dataset
    key1, mine = the_group(recs)
    whole = breakdown(server, app, key1).json
    # What the data set is there to show: a rest row, reports without an
    # OS version or device, whitelisted users counted, ties by value.
    assert [v["value"] for v in whole["by"]["app_version"]][-1] is None
    assert len(whole["by"]["app_version"]) == TOP + 1
    assert "" in [v["value"] for v in whole["by"]["device"]]
    assert "" in [v["value"] for v in whole["by"]["os_version"]]
    assert {r["user"] for r in mine} >= set(VIPS)
    assert [v["value"] for v in whole["by"]["app_version"][1:3]] == ["1.1", "1.10"]
    check_all(server, app, recs, days)


def test_breakdown_comes_from_the_aggregates(dataset, db):
    """The answers stay once the report rows are gone: no report scan."""
    server, app, recs, days = dataset
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    psql(db, f"DELETE FROM reports WHERE app_id = {app_id}")
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {app_id}") == "0"
    check_all(server, app, recs, days)


def test_breakdown_of_an_unknown_group_or_level2_is_404(dataset):
    server, app, recs, _ = dataset
    key1, mine = the_group(recs)
    other = next(r for r in recs if r["key1"] != key1)
    assert breakdown(server, app, "0" * 32).status == 404
    assert breakdown(server, app, key1, {"level2": "0" * 32}).status == 404
    # A level-2 group of another level-1 group is not this one's.
    assert breakdown(server, app, key1, {"level2": other["key2"]}).status == 404
    assert breakdown(server, app, other["key1"], {"level2": other["key2"]}).status == 200
    bad = breakdown(server, app, key1, {"kind": "slow"})
    assert bad.status == 400 and bad.error_code == "bad_query", bad
    assert breakdown(server, app, key1, {"from": "yesterday"}).status == 400
    unauth = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{key1}/breakdown")
    assert unauth.status == 401
