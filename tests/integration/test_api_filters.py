"""Issue 22, item 4: the API gaps the dashboard worked around. A group's
detail and its reports take the group list's filters; first/last seen
follow the filters in the list too; GET …/dimensions lists the app's
versions, OS versions, devices and kinds with counts; the whitelist PUT
answers created_at; logs and 404s show the path as sent.

Every expected answer is computed here from the reports the test posted
(when, by whom, with which dimensions: servers whose clock is set with
STALLSCOPE_FAKE_NOW receive them at known times) and from the groups the
server put each report in (GET /api/v1/reports/{id}), or with SQL of our
own over the report rows."""

import json
import random
import socket
import time
import urllib.parse

import pytest

from conftest import DIM_ROWS, _new_server, create_app, fixture_of, fold, migrate, psql
from ingest_util import Image, allow_everyone, fresh_id, native, post

DAY = 86400
KINDS = ("stall", "hang")
VERSIONS = ("1.0", "1.1")
OS_VERSIONS = ("16.4", "17.2")
DEVICES = ("iPhone14,2", "iPad13,1", None)  # None: the report names none


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def day_of(t):
    return time.strftime("%Y-%m-%d", time.gmtime(t))


def stacks_of(image):
    """Four stacks: two share their innermost frames (one level-1 group,
    two level-2 groups)."""
    f = image.by_function
    return [[f[1], f[2]], [f[3], f[4], f[5]], [f[3], f[4], f[6]], [f[7], f[1]]]


def start(db, tmp_root, at=None):
    return _new_server(db, tmp_root, {"STALLSCOPE_FAKE_NOW": str(at)} if at else None).start()


def post_batch(server, app, image, reports):
    """Posts REPORTS (dicts: stack, user, version, os, device, kind, and
    optionally duration, None for none, and uuid, the image's in place of
    IMAGE's) in one request; returns them with the stored report's id."""
    bodies = []
    for r in reports:
        body = native(fresh_id(), image, r["stack"], user=r["user"], kind=r["kind"],
                      app_version=r["version"], os_version=r["os"], device=r["device"],
                      duration_ms=r.get("duration", 2500))
        for field in ("device", "duration_ms"):
            if body[field] is None:
                del body[field]
        body["images"][0]["uuid"] = r.get("uuid", image.uuid)
        bodies.append(body)
    reply = post(server, app, "/api/v1/ingest", {"reports": bodies})
    assert reply.status == 202 and not reply.json["rejected"], reply
    for r, accepted in zip(reports, reply.json["accepted"]):
        r["id"] = accepted["id"]
    return reports


def post_over_days(db, tmp_root, app, image, times, batch_of, upload):
    """For each of TIMES a server whose clock says it posts BATCH_OF(i, at)
    (post_batch); the first also makes APP sample everyone for 30 days and,
    when UPLOAD, takes IMAGE's dSYM first. Returns the posted reports."""
    recs = []
    for i, at in enumerate(times):
        server = start(db, tmp_root, at)
        if i == 0:
            if upload:
                assert server.upload(app, image.dwarf).status in (200, 201)
            allow_everyone(server, app, retention_days=30)
        recs += post_batch(server, app, image, batch_of(i, at))
        assert server.stop() == 0
    return recs


def place(server, app, reports):
    """Adds each report's groups (key1, key2) as the server keeps them."""
    for r in reports:
        got = server.request("GET", f"/api/v1/reports/{r['id']}", token=app["admin_token"])
        assert got.status == 200, got
        r["key1"], r["key2"] = got.json["key1"], got.json["key2"]


def regroup(server, app, image, recs):
    """Uploads the dSYM RECS waited for; returns once reprocessing moved
    every one of them to another level-1 group (their keys updated)."""
    old_keys = {r["key1"] for r in recs}
    assert server.upload(app, image.dwarf).status in (200, 201)
    deadline = time.time() + 20
    while time.time() < deadline and any(
            server.request("GET", f"/api/v1/reports/{r['id']}",
                           token=app["admin_token"]).json["pending"] for r in recs):
        time.sleep(0.2)
    place(server, app, recs)
    assert not old_keys & {r["key1"] for r in recs}, "every report moved"


def matches(r, f):
    day = day_of(r["at"])
    if f.get("from") and day < f["from"] or f.get("to") and day > f["to"]:
        return False
    have = {"version": r["version"], "os_version": r["os"], "device": r["device"] or "",
            "kind": r["kind"]}
    return all(f[k] == v for k, v in have.items() if k in f)


def summary(rows):
    """What the API says of a group holding ROWS."""
    per_day = {}
    for r in rows:
        per_day[day_of(r["at"])] = per_day.get(day_of(r["at"]), 0) + 1
    return {"reports": len(rows), "users": len({r["user"] for r in rows}),
            "first_seen": iso(min(r["at"] for r in rows)) if rows else None,
            "last_seen": iso(max(r["at"] for r in rows)) if rows else None,
            "daily": [{"day": d, "reports": n} for d, n in sorted(per_day.items())]}


def shown(group):
    return {k: group[k] for k in ("reports", "users", "first_seen", "last_seen", "daily")}


def query(f):
    return urllib.parse.urlencode(f)


def get(server, app, path):
    """PATH's 200 reply, without the "as_of" of an aggregate read (SPEC
    §12; its value changes with every fold: test_read_replica.py checks
    it)."""
    r = server.request("GET", f"/api/v1/apps/{app['app']}{path}", token=app["admin_token"])
    assert r.status == 200, (path, r)
    if isinstance(r.json, dict):
        r.json.pop("as_of", None)
    return r.json


def every_page(server, app, path, items, field):
    """FIELD of every item of every page of PATH (a query with limit=),
    following next_cursor; ITEMS names the reply's list."""
    out, cursor = [], None
    while True:
        page = get(server, app, path + (f"&cursor={cursor}" if cursor else ""))
        out += [item[field] for item in page[items]]
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def check_groups(server, app, recs, f):
    """The list (both levels), every level-1 group's detail and every
    level-2 group's reports under the filters F."""
    want_any = check_counts(server, app, recs, f)
    for key1, key2 in {(r["key1"], r["key2"]) for r in recs}:
        ids = every_page(server, app, f"/groups/{key1}/{key2}/reports?limit=2&{query(f)}",
                         "reports", "id")
        want_ids = [r["id"] for r in sorted(
            (r for r in want_any if (r["key1"], r["key2"]) == (key1, key2)),
            key=lambda r: (r["at"], r["id"]), reverse=True)]
        assert ids == want_ids, (key1, key2, f)


def check_counts(server, app, recs, f):
    """The list (both levels) and every level-1 group's detail under the
    filters F; returns the reports F keeps."""
    want_any = [r for r in recs if matches(r, f)]
    for level, key in ((1, "key1"), (2, "key2")):
        listed = get(server, app, f"/groups?level={level}&limit=500&{query(f)}")["groups"]
        want = {}
        for r in want_any:
            want.setdefault(r[key], []).append(r)
        assert {g["key"]: shown(g) for g in listed} == \
            {k: summary(rows) for k, rows in want.items()}, (level, f)
    for key1 in {r["key1"] for r in recs}:
        detail = get(server, app, f"/groups/{key1}?{query(f)}")
        rows = [r for r in want_any if r["key1"] == key1]
        assert detail["group"]["key"] == key1
        assert shown(detail["group"]) == summary(rows), (key1, f)
        subs = {}
        for r in rows:
            subs.setdefault(r["key2"], []).append(r)
        want_subs = sorted(((k, summary(v)) for k, v in subs.items()),
                           key=lambda kv: (-kv[1]["reports"], kv[0]))
        assert [(g["key"], shown(g)) for g in detail["subgroups"]] == want_subs, (key1, f)
    return want_any


def expected_dimensions(recs, since=None, until=None):
    inside = [r for r in recs if (not since or day_of(r["at"]) >= since)
              and (not until or day_of(r["at"]) <= until)]
    out = {}
    for name, field in (("versions", "version"), ("os_versions", "os"),
                        ("devices", "device"), ("kinds", "kind")):
        values = {}
        for r in inside:
            values.setdefault(r[field] or "", []).append(r["at"])
        items = [{"value": v, "reports": len(ats), "first_seen": iso(min(ats)),
                  "last_seen": iso(max(ats))} for v, ats in values.items()]
        items.sort(key=lambda i: i["value"])  # ties by value, then (stable):
        if name == "versions":
            items.sort(key=lambda i: i["first_seen"], reverse=True)
        else:
            items.sort(key=lambda i: -i["reports"])
        out[name] = items
    return out


@pytest.fixture(scope="module")
def dataset(db, tmp_root, image):
    """Reports of one app received at four known times over three days:
    versions, OS versions, devices, kinds and users drawn at random (seeded),
    version 2.0 only from the second day, a device missing from some."""
    app = create_app(db)
    base = (int(time.time()) // DAY - 3) * DAY
    times = [base + 9 * 3600, base + 15 * 3600 + 1800, base + DAY + 11 * 3600,
             base + 2 * DAY + 8 * 3600]
    rng = random.Random(22)
    stacks = stacks_of(image)
    recs = post_over_days(db, tmp_root, app, image, times, lambda i, at: [
        {"stack": rng.choice(stacks), "user": f"u{rng.randrange(6)}",
         "version": rng.choice(VERSIONS + (("2.0",) if i >= 2 else ())),
         "os": rng.choice(OS_VERSIONS), "device": rng.choice(DEVICES),
         "kind": rng.choice(KINDS), "at": at} for _ in range(12)], upload=True)
    server = start(db, tmp_root)
    place(server, app, recs)
    yield server, app, recs, [day_of(t) for t in times]
    assert server.stop() == 0


def test_group_detail_and_reports_take_the_list_filters(dataset):
    server, app, recs, days = dataset
    by_key1 = {}
    for r in recs:
        by_key1.setdefault(r["key1"], set()).add(r["key2"])
    assert max(len(v) for v in by_key1.values()) >= 2, "a group with two subgroups"
    filters = [{}, {"version": "1.1"}, {"from": days[2]}, {"to": days[0]},
               {"from": days[0], "to": days[2], "kind": "hang"},
               {"os_version": "17.2", "device": "iPad13,1"}, {"device": ""},
               {"version": "2.0", "kind": "stall", "to": days[3]}]
    for f in filters:
        assert any(matches(r, f) for r in recs), f
        assert not all(matches(r, f) for r in recs) or not f, f
        check_groups(server, app, recs, f)


def test_a_group_without_matching_reports_is_empty_not_missing(dataset):
    server, app, recs, days = dataset
    key1, key2 = recs[0]["key1"], recs[0]["key2"]
    for f in ({"version": "9.9"}, {"from": "2001-01-01", "to": "2001-01-02"}):
        detail = get(server, app, f"/groups/{key1}?{query(f)}")
        assert shown(detail["group"]) == summary([]) and detail["subgroups"] == []
        assert get(server, app, f"/groups/{key1}/{key2}/reports?{query(f)}")["reports"] == []
    unknown = server.request("GET", f"/api/v1/apps/{app['app']}/groups/{'0' * 32}?version=1.0",
                             token=app["admin_token"])
    assert unknown.status == 404 and unknown.error_code == "not_found", unknown


def test_first_and_last_seen_follow_the_filters_in_the_list(dataset):
    """The case the old list got wrong: a group seen on the first and last
    day, asked about the middle day only."""
    server, app, recs, days = dataset
    f = {"from": days[2], "to": days[2]}
    listed = {g["key"]: g for g in get(server, app, f"/groups?level=1&{query(f)}")["groups"]}
    assert listed
    for key, g in listed.items():
        rows = [r for r in recs if r["key1"] == key and matches(r, f)]
        assert (g["first_seen"], g["last_seen"]) == (iso(min(r["at"] for r in rows)),
                                                     iso(max(r["at"] for r in rows)))
    everywhere = [k for k in listed if {day_of(r["at"]) for r in recs if r["key1"] == k}
                  >= {days[0], days[3]}]
    assert everywhere, "a group seen on the first and the last day"
    # Sorting by last_seen uses the filtered value too.
    by_last = get(server, app, f"/groups?level=1&sort=last_seen&{query(f)}")["groups"]
    assert [g["last_seen"] for g in by_last] == sorted((g["last_seen"] for g in by_last),
                                                       reverse=True)


def test_filter_errors_are_the_lists(dataset):
    server, app, recs, days = dataset
    key1, key2 = recs[0]["key1"], recs[0]["key2"]
    for bad in ("from=2026-02-30", "to=yesterday", "kind=freeze", "from=2026-1-1"):
        answers = []
        for path in ("/groups", f"/groups/{key1}", f"/groups/{key1}/{key2}/reports"):
            r = server.request("GET", f"/api/v1/apps/{app['app']}{path}?{bad}",
                               token=app["admin_token"])
            answers.append((r.status, r.error_code, r.json["error"]["message"]))
        assert answers[0][:2] == (400, "bad_query") and bad.split("=")[0] in answers[0][2]
        assert answers == [answers[0]] * 3, (bad, answers)


def test_dimensions_list_known_values_with_counts(dataset, db):
    server, app, recs, days = dataset
    assert any(r["device"] is None for r in recs)
    future = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 30 * DAY))
    for since, until in ((None, None), (days[2], None), (days[0], days[2]), (None, days[0]),
                         (future, None)):
        f = {k: v for k, v in (("from", since), ("to", until)) if v}
        got = get(server, app, f"/dimensions?{query(f)}")
        assert got == expected_dimensions(recs, since, until), f
    assert get(server, app, f"/dimensions?from={future}") == {
        "versions": [], "os_versions": [], "devices": [], "kinds": []}
    # The list filtered by each known value counts what the pick list says.
    for item in get(server, app, "/dimensions")["versions"]:
        listed = get(server, app, f"/groups?version={item['value']}&limit=500")["groups"]
        assert sum(g["reports"] for g in listed) == item["reports"]
    bad = server.request("GET", f"/api/v1/apps/{app['app']}/dimensions?to=2026-13-01",
                         token=app["admin_token"])
    assert bad.status == 400 and bad.error_code == "bad_query" and "to" in bad.json["error"]["message"]
    other = create_app(db)
    assert server.request("GET", f"/api/v1/apps/{app['app']}/dimensions",
                          token=other["admin_token"]).status == 403
    assert server.request("GET", f"/api/v1/apps/{app['app']}/dimensions",
                          token=app["upload_token"]).status == 403


def test_filtered_numbers_stay_exact_through_reprocessing(db, tmp_root, image):
    """Reports stored before their dSYM move to their real groups: the
    filtered detail, list and reports, first/last seen and the dimensions
    then agree with where they are; the aggregate rows (counts, users,
    bounds) agree with our own SQL over the report rows."""
    app = create_app(db)
    base = (int(time.time()) // DAY - 2) * DAY
    stacks = stacks_of(image)
    # The same user, day and dimensions at three times: counted once.
    times = (base + 8 * 3600, base + 12 * 3600, base + DAY + 9 * 3600)
    recs = post_over_days(db, tmp_root, app, image, times, lambda i, at: [
        {"stack": stacks[n % 4], "user": "same" if n < 2 else f"u{n}",
         "version": VERSIONS[n % 2], "os": "17.2", "device": "iPhone14,2",
         "kind": KINDS[n % 2] if n >= 2 else "stall", "at": at} for n in range(6)],
        upload=False)
    server = start(db, tmp_root)
    try:
        place(server, app, recs)
        assert all(get(server, app, "/groups?level=1")["groups"])
        before = get(server, app, "/dimensions")
        assert before == expected_dimensions(recs)
        regroup(server, app, image, recs)
        day0 = day_of(base)
        for f in ({}, {"from": day0, "to": day0}, {"kind": "stall", "version": "1.0"}):
            check_groups(server, app, recs, f)
        assert get(server, app, "/dimensions") == before
        app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
        aggregates_agree(db, app_id)
    finally:
        assert server.stop() == 0


def aggregates_agree(db, app_id):
    """Asserts that every aggregate row of APP_ID — both levels, per day
    (group_days) and per day and dimensions (group_dim_days) — holds the
    reports, distinct users and first/last received_at of the report rows
    it stands for, by our own SQL."""
    for table, dims in (("group_days", ""),
                        ("group_dim_days", ", app_version, os_version, device, kind")):
        ours_dims = dims and (", coalesce(app_version, ''), coalesce(os_version, ''),"
                              " coalesce(device, ''), kind")
        order = "1, 2, 3, 4, 5, 6" if dims else "1, 2"
        for level, key in ((1, "key1"), (2, "key2")):
            kept = psql(db, f"SELECT key, day{dims}, reports, hll_cardinality(users)::bigint,"
                            f" first_seen, last_seen FROM {DIM_ROWS if dims else table}"
                            f" WHERE app_id = {app_id} AND level = {level} ORDER BY {order}")
            ours = psql(db, f"SELECT {key}, received_day{ours_dims}, count(*),"
                            " count(DISTINCT user_id), min(received_at), max(received_at)"
                            f" FROM reports WHERE app_id = {app_id}"
                            f" GROUP BY {key}, received_day{ours_dims} ORDER BY {order}")
            assert kept == ours, (table, level)


@pytest.fixture(scope="module")
def served_by_none(cluster):
    """A database no server uses: no delta folder counts its deltas (the
    servers of the session's database fold every app's every second)."""
    url = cluster.create_db("it_served_by_none")
    migrate(url)
    return url


@pytest.mark.parametrize("folded", [True, False], ids=["folded", "waiting"])
def test_move_report_keeps_row_bounds_exact(served_by_none, folded):
    """move_report on an aggregate row of three reports:
    moving the first, then the last, leaves the row the bounds of the
    reports still in it, as our own SQL over the report rows says — with
    the reports counted in the day rows first (folded), and with their
    deltas still waiting (no server here, so no folder), when the move
    takes the delta and the groups' users come from the waiting deltas."""
    db = served_by_none
    bundle = create_app(db)["app"]
    app = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{bundle}'")
    version = psql(db, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app})"
                       " RETURNING version) SELECT version FROM made")
    psql(db, f"INSERT INTO whitelist (app_id, user_id) VALUES ({app}, 'u')")
    ats = ["2026-11-20 08:00:00+00", "2026-11-20 12:00:00+00", "2026-11-20 17:30:00+00"]
    arr = lambda v, t="text": f"ARRAY[{v}]::{t}[]"
    ids = []
    for i, at in enumerate(ats):
        out = psql(db, f"""
            SELECT outcome || ' ' || report FROM ingest_reports({app}, {version},
              {arr(f"'r{i}-{fresh_id()}'")}, {arr("'u'")}, {arr("'2026-11-20'", "date")},
              {arr(f"'{at}'", "timestamptz")}, {arr("true", "boolean")}, {arr("'stall'")},
              {arr("'native'")}, {arr("'1.0'")}, {arr("NULL")}, {arr("NULL")},
              {arr("'17.2'")}, {arr("NULL")}, {arr("NULL")}, {arr("NULL")},
              {arr("NULL", "bigint")}, {arr("'k1'")}, {arr("'k2'")},
              {arr("false", "boolean")}, {arr("'[]'")}, {arr("'[]'")}, {arr("'[]'")},
              {arr("'{}'")}, {arr("'{}'")}, {arr("'{}'")}, {arr("'{}'")},
              '{{}}'::uuid[], '{{}}'::text[], {arr("NULL")})""").split()
        assert out[0] == "stored", out
        ids.append(out[1])

    def move(i):
        if folded:
            fold(db)
        # As reprocessing does: the counters first, then the row's keys.
        psql(db, f"SELECT move_report({app}, {ids[i]}, 'k1', 'k2', 'm1', 'm2', '[]', '[]',"
                 " '2026-11-20',"
                 f" '{ats[i]}', '1.0', '17.2', '', 'stall', 'u', NULL);"
                 f" UPDATE reports SET key1 = 'm1', key2 = 'm2' WHERE app_id = {app}"
                 f" AND id = {ids[i]}")

    def rows():
        aggregates_agree(db, app)
        return psql(db, f"SELECT key, reports FROM group_days WHERE app_id = {app}"
                        " AND level = 1 ORDER BY 1").splitlines()

    def waiting():
        return psql(db, f"SELECT key1 FROM group_deltas WHERE app_id = {app} ORDER BY report")

    move(0)
    if folded:
        assert waiting() == ""
        assert [r.split("|")[:2] for r in rows()] == [["k1", "2"], ["m1", "1"]]
    else:
        assert waiting().split() == ["m1", "k1", "k1"]
    move(2)
    if not folded:
        assert waiting().split() == ["m1", "k1", "m1"]
    assert [r.split("|")[:2] for r in rows()] == [["k1", "1"], ["m1", "2"]]
    assert psql(db, f"SELECT level, key, reports, users FROM groups WHERE app_id = {app}"
                    " ORDER BY 1, 2").splitlines() == [
        "1|k1|1|1", "1|m1|2|1", "2|k2|1|1", "2|m2|2|1"]


def test_whitelist_put_answers_created_at_as_listed(server, db):
    app = create_app(db)
    token = app["admin_token"]
    base = f"/api/v1/apps/{app['app']}/whitelist"
    put = server.request("PUT", f"{base}/tester", token=token,
                         body=json.dumps({"note": "beta", "expires_at":
                                          "2099-01-02T03:04:05+02:00"}).encode())
    assert put.status == 200, put
    listed = server.request("GET", base, token=token).json["whitelist"]
    assert put.json == listed[0]
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    stored = psql(db, "SELECT to_char(created_at AT TIME ZONE 'UTC',"
                      " 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), to_char(expires_at AT TIME ZONE"
                      " 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM whitelist"
                      f" WHERE app_id = {app_id} AND user_id = 'tester'").split("|")
    assert put.json["created_at"] == stored[0]
    assert put.json["expires_at"] == stored[1] == "2099-01-02T01:04:05Z"
    # Replacing the entry keeps the day the user was first listed.
    psql(db, f"UPDATE whitelist SET created_at = '2026-01-01 00:00:00+00'"
             f" WHERE app_id = {app_id} AND user_id = 'tester'")
    again = server.request("PUT", f"{base}/tester", token=token, body=b'{"note": "gamma"}')
    assert again.status == 200, again
    assert again.json == {"user_id": "tester", "note": "gamma", "expires_at": None,
                          "created_at": "2026-01-01T00:00:00Z"}
    assert server.request("GET", base, token=token).json["whitelist"] == [again.json]


def raw_request(server, target):
    """TARGET (bytes) sent as is: http.client would check it first."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def access_paths(server, request_id):
    return [line.split(" path=", 1)[1].split(" ", 1)[0] for line in server.log().splitlines()
            if "access " in line and f" id={request_id}" in line]


def test_logs_and_404s_show_the_path_as_sent(server, db):
    sent = "/api/v1/nope%2Fx%20y%0Aevil%25"
    r = server.request("GET", sent, headers={"X-Request-Id": "raw-404"})
    assert r.status == 404 and r.json["error"]["message"] == f"no endpoint {sent}", r
    app = create_app(db)
    put = f"/api/v1/apps/{app['app']}/whitelist/team%2Falice%0D%0Aaccess"
    r = server.request("PUT", put, token=app["admin_token"], headers={"X-Request-Id": "raw-put"})
    assert r.status == 200 and r.json["user_id"] == "team/alice\r\naccess", r
    deadline = time.time() + 5
    while time.time() < deadline and not access_paths(server, "raw-put"):
        time.sleep(0.1)
    assert access_paths(server, "raw-404") == [sent]
    assert access_paths(server, "raw-put") == [put]
    # Nothing the client encoded starts a log line of its own: every line
    # naming it holds the whole path.
    naming = [l for l in server.log().splitlines() if "evil" in l or "alice" in l]
    assert naming and all(sent in l or put in l for l in naming), naming
    # Invalid UTF-8 as sent, valid once decoded: refused, never echoed.
    status, body = raw_request(server, b"/api/v1/\xc3%A9")
    assert status == 400 and json.loads(body)["error"]["code"] == "bad_query"


def test_migration_backfills_bounds_and_dimensions(cluster, tmp_path):
    """015 on a database holding reports: group_daily rows get the bounds
    of their reports (of the group, for a day retention dropped), and
    app_dimensions the counts of what was stored."""
    from test_migrate import migrate_up_to

    url = cluster.create_db("it_migrate_dimensions")
    migrate_up_to(url, tmp_path, 15)
    app = psql(url, "SELECT id FROM apps WHERE bundle_id = '%s'" % create_app(url)["app"])
    version = psql(url, f"WITH made AS (INSERT INTO app_config (app_id) VALUES ({app})"
                        " RETURNING version) SELECT version FROM made")
    psql(url, f"INSERT INTO whitelist (app_id, user_id) VALUES ({app}, 'u')")
    # (key, received_at, app version, device): the 10th is dropped below.
    stored = [("k", "2026-11-10 09:00:00+00", "1.0", None),
              ("k", "2026-11-11 07:00:00+00", "1.0", "iPad13,1"),
              ("k", "2026-11-11 16:00:00+00", "1.0", "iPad13,1"),
              ("k", "2026-11-11 12:00:00+00", "2.0", None),
              ("j", "2026-11-11 13:00:00+00", "2.0", None)]
    arr = lambda v, t="text": f"ARRAY[{v}]::{t}[]"
    lit = lambda v: "NULL" if v is None else f"'{v}'"
    for i, (key, at, app_version, device) in enumerate(stored):
        assert psql(url, f"""
            SELECT outcome FROM ingest_reports({app}, {version}, {arr(f"'r{i}'")},
              {arr("'u'")}, {arr(f"'{at[:10]}'", "date")}, {arr(f"'{at}'", "timestamptz")},
              {arr("true", "boolean")}, {arr("'stall'")}, {arr("'native'")},
              {arr(lit(app_version))}, {arr("NULL")}, {arr("NULL")}, {arr("'17.2'")},
              {arr("NULL")}, {arr(lit(device))}, {arr("NULL")}, {arr("NULL", "bigint")},
              {arr(f"'{key}1'")}, {arr(f"'{key}2'")}, {arr("false", "boolean")},
              {arr("'[]'")}, {arr("'[]'")}, {arr("'[]'")}, {arr("'{}'")},
              {arr("'{}'")})""") == "stored"
    # k2 last seen the 11th: its day of the 10th keeps the day's bounds
    # narrowed to the group's first seen.
    psql(url, f"DROP TABLE reports_a{app}_20261110")

    # 015 alone: 016 replaces group_daily (tests/integration/test_aggregates.py).
    migrate_up_to(url, tmp_path / "at15", 16)
    assert psql(url, "SELECT max(version) FROM schema_migrations") == "15"
    rows = psql(url, "SELECT key2, day, app_version, device, reports,"
                     " to_char(first_seen AT TIME ZONE 'UTC', 'DD HH24:MI:SS.US'),"
                     " to_char(last_seen AT TIME ZONE 'UTC', 'DD HH24:MI:SS.US')"
                     f" FROM group_daily WHERE app_id = {app} ORDER BY 1, 2, 3, 4").splitlines()
    # What we stored, per group_daily row: (key2, day, version, device) ->
    # received_at times (the time part, "DD HH:MM:SS").
    per_row = {}
    for key, at, app_version, device in stored:
        per_row.setdefault((key + "2", at[:10], app_version, device or ""), []).append(
            at[8:19])
    group_last = max(at[8:19] for key, at, _, _ in stored if key == "k")
    want = []
    for (key2, day, app_version, device), ats in sorted(per_row.items()):
        first, last = min(ats) + ".000000", max(ats) + ".000000"
        if day == "2026-11-10":  # dropped: up to the day's end, the group's last being later
            assert group_last > day[8:] + " 23:59:59"
            last = day[8:] + " 23:59:59.999999"
        want.append(f"{key2}|{day}|{app_version}|{device}|{len(ats)}|{first}|{last}")
    assert rows == want
    dims = psql(url, "SELECT day, dim, value, reports, to_char(first_seen AT TIME ZONE 'UTC',"
                     " 'DD HH24:MI:SS.US'), to_char(last_seen AT TIME ZONE 'UTC',"
                     " 'DD HH24:MI:SS.US') FROM app_dimensions"
                     f" WHERE app_id = {app} ORDER BY 1, 2, 3").splitlines()
    per_value = {}
    for line in want:
        key2, day, app_version, device, n, first, last = line.split("|")
        for dim, value in (("device", device), ("kind", "stall"), ("os_version", "17.2"),
                           ("version", app_version)):
            seen = per_value.setdefault((day, dim, value), [0, first, last])
            seen[0] += int(n)
            seen[1], seen[2] = min(seen[1], first), max(seen[2], last)
    assert dims == [f"{day}|{dim}|{value}|{n}|{first}|{last}"
                    for (day, dim, value), (n, first, last) in sorted(per_value.items())]
