"""Issue 26, SPEC §10.2: active, sampled and stalled users per app, day and
version, counted from GET /api/v1/sampling check-ins (with app_version) and
stored reports, read back through GET /api/v1/apps/{app}/stats.

The expectations are computed here from the SPEC's rules: a user is
sampled on a day iff XXH3_64bits("APP\\0USER\\0DAY") / 2^64 < sample_rate
(libxxhash through ctypes, not the server's code), whitelisted users are
in active_users but in no rate, the first daily_quota reports of a sampled
user are stored."""

import concurrent.futures
import ctypes
import json
import urllib.parse

import pytest

from conftest import create_app, fixture_of, psql, stallscope
from ingest_util import Image, allow_everyone, fresh_id, native, post

DAY = 86400
NOON = 1795176000  # 2026-11-20T12:00:00Z
TODAY = "2026-11-20"
RATE = 0.3
QUOTA = 2

_xxh = ctypes.CDLL("libxxhash.so.0")
_xxh.XXH3_64bits.restype = ctypes.c_uint64
_xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def is_sampled(bundle, user, day, rate):
    data = f"{bundle}\0{user}\0{day}".encode()
    return _xxh.XXH3_64bits(data, len(data)) / 2.0**64 < rate


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


def check_in(server, app, user, version=None, os_version=None):
    q = {"user_id": user}
    if version is not None:
        q["app_version"] = version
    if os_version is not None:
        q["os_version"] = os_version
    r = server.request("GET", "/api/v1/sampling?" + urllib.parse.urlencode(q),
                       key=app["ingest_key"])
    assert r.status == 200, r
    return r.json


def stats(server, app, **q):
    query = urllib.parse.urlencode(q)
    r = server.request("GET", f"/api/v1/apps/{app['app']}/stats" + ("?" + query if q else ""),
                       token=app["admin_token"])
    assert r.status == 200, r
    return r.json["days"]


class Expected:
    """What the stats must say, from the check-ins and uploads made."""

    def __init__(self, bundle, listed):
        self.bundle, self.listed = bundle, listed
        self.active = {}    # version -> users
        self.reported = {}  # version -> users with a stored report
        self.reports = {}   # version -> stored reports
        self.stall_ms = {}  # version -> their summed durations
        self.used = {}      # user -> stored reports today (quota)

    def sampled(self, user):
        return user not in self.listed and is_sampled(self.bundle, user, TODAY, RATE)

    def seen(self, user, version):
        self.active.setdefault(version, set()).add(user)

    def upload_status(self, user):
        """The status SPEC §5 gives the user's next report, counting it."""
        if user in self.listed:
            return 202
        if not is_sampled(self.bundle, user, TODAY, RATE):
            return 403
        if self.used.get(user, 0) >= QUOTA:
            return 429
        self.used[user] = self.used.get(user, 0) + 1
        return 202

    def stored(self, user, version, duration):
        self.seen(user, version)
        self.reported.setdefault(version, set()).add(user)
        self.reports[version] = self.reports.get(version, 0) + 1
        self.stall_ms[version] = self.stall_ms.get(version, 0) + duration

    def rows(self):
        out = []
        day_active = sum(len(users) for users in self.active.values())
        for version in sorted(self.active):
            users = self.active[version]
            sampled = {u for u in users if self.sampled(u)}
            stalled = sampled & self.reported.get(version, set())
            out.append({"day": TODAY, "version": version, "active_users": len(users),
                        "sampled_users": len(sampled), "stalled_users": len(stalled),
                        "reports": self.reports.get(version, 0),
                        "stall_ms": self.stall_ms.get(version, 0),
                        # SPEC §10.2: like crash-free users; adoption is the
                        # version's share of the day's (version, user) pairs.
                        "hang_free_users": pytest.approx(1 - len(stalled) / len(sampled))
                        if sampled else None,
                        "adoption": pytest.approx(len(users) / day_active)})
        return out


def whitelist(server, app, user):
    r = server.request("PUT", f"/api/v1/apps/{app['app']}/whitelist/{user}", body=b"{}",
                       token=app["admin_token"])
    assert r.status == 200, r


def upload(server, app, image, exp, user, version, duration):
    status = exp.upload_status(user)
    r = post(server, app, "/api/v1/ingest",
             native(fresh_id(), image, [image.plain[0]], user=user, app_version=version,
                    duration_ms=duration))
    assert r.status == status, (user, r)
    if status == 202:
        exp.stored(user, version, duration)


def test_stats_count_active_sampled_and_stalled_users(db, make_server, image):
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app, sample_rate=RATE, daily_quota=QUOTA)
    listed = {f"vip-{i}" for i in range(4)}
    for user in listed:
        whitelist(server, app, user)
    exp = Expected(app["app"], listed)
    users = [f"user-{i}" for i in range(80)] + sorted(listed)
    versions = ["2.9", "2.10"]
    # Check-ins: every user on one version, some on both, some twice; and
    # old clients without app_version, counted nowhere.
    for i, user in enumerate(users):
        version = versions[i % 2]
        answer = check_in(server, app, user, version, os_version="17.2")
        assert answer["upload"] == (user in listed or is_sampled(app["app"], user, TODAY,
                                                                 RATE)), (user, answer)
        exp.seen(user, version)
        if i % 5 == 0:
            check_in(server, app, user, version)
        if i % 7 == 0:
            check_in(server, app, user, versions[(i + 1) % 2])
            exp.seen(user, versions[(i + 1) % 2])
    for i in range(10):
        check_in(server, app, f"old-client-{i}")
    sampled_users = [u for u in users if exp.sampled(u)]
    assert len(sampled_users) >= 10, "too few sampled users for the test to mean anything"
    # Reports: from sampled users (some past the quota), unsampled ones
    # (refused), whitelisted ones, and users who never checked in.
    for k, user in enumerate(users):
        if k % 3 == 0:
            for j in range(1 + k % 4):
                upload(server, app, image, exp, user, versions[k % 2], 100 * (k + j) + 250)
    for i in range(40):
        user = f"silent-{i}"
        upload(server, app, image, exp, user, versions[i % 2], 1000 + i)
    # Check-ins after a stored report count nobody twice.
    for i in range(0, 40, 3):
        check_in(server, app, f"silent-{i}", versions[i % 2])
        exp.seen(f"silent-{i}", versions[i % 2])
    assert any(exp.used.get(u, 0) == QUOTA for u in sampled_users)
    got = stats(server, app)
    assert sorted(got, key=lambda r: r["version"]) == \
        sorted(exp.rows(), key=lambda r: r["version"])
    # Whitelisted users are active but in no rate; old clients nowhere.
    assert sum(r["active_users"] for r in got) == \
        sum(len(v) for v in exp.active.values())
    (only,) = stats(server, app, version="2.10")
    # A version filter leaves the day's other versions in adoption's share.
    assert only == next(r for r in exp.rows() if r["version"] == "2.10")
    assert 0 < only["adoption"] < 1 and 0 < only["hang_free_users"] < 1
    assert stats(server, app, **{"from": "2026-11-21"}) == []


def test_stats_range_defaults_to_retention_window(db, make_server):
    app = create_app(db)
    old = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON - 10 * DAY)})
    check_in(old, app, "early", "1.0")
    today = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    check_in(today, app, "late", "1.0")
    check_in(today, app, "late", "1.0")
    # retention_days 7 by default: 2026-11-10 is outside, today inside.
    assert [(r["day"], r["active_users"]) for r in stats(today, app)] == [(TODAY, 1)]
    every = stats(today, app, **{"from": "2026-11-01", "to": TODAY})
    assert [(r["day"], r["active_users"]) for r in every] == \
        [("2026-11-10", 1), (TODAY, 1)]
    # Retention deletes the per-user rows of old days; the counters stay.
    stallscope("purge", db_url=db, extra_env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    assert psql(db, f"SELECT day, user_id FROM activity_users a JOIN apps p ON p.id = a.app_id"
                    f" WHERE p.bundle_id = '{app['app']}'") == f"{TODAY}|late"
    assert stats(today, app, **{"from": "2026-11-01"}) == every
    bad = today.request("GET", f"/api/v1/apps/{app['app']}/stats?from=yesterday",
                        token=app["admin_token"])
    assert bad.status == 400 and bad.error_code == "bad_query", bad
    unauth = today.request("GET", f"/api/v1/apps/{app['app']}/stats", key=app["ingest_key"])
    assert unauth.status in (401, 403), unauth
    for query in ("app_version=", "app_version=" + "9" * 257, "app_version=1&os_version="):
        r = today.request("GET", f"/api/v1/sampling?user_id=u&{query}", key=app["ingest_key"])
        assert r.status == 400 and r.error_code == "bad_query", (query, r)


def test_concurrent_check_ins_are_all_counted(db, make_server):
    """Every acknowledged check-in is counted once, whatever the batches the
    writer made of them."""
    app = create_app(db)
    server = make_server(env={"STALLSCOPE_FAKE_NOW": str(NOON)})
    allow_everyone(server, app, sample_rate=RATE)
    users = [f"c-{i}" for i in range(200)]
    # Each user twice, in different batches or the same one.
    calls = [(u, "3.0") for u in users] * 2 + [(u, "3.1") for u in users[:50]]

    def ask(call):
        conn = server.connection()
        try:
            q = urllib.parse.urlencode({"user_id": call[0], "app_version": call[1]})
            conn.request("GET", f"/api/v1/sampling?{q}",
                         headers={"X-Stallscope-Key": app["ingest_key"]})
            resp = conn.getresponse()
            resp.read()
            return resp.status
        finally:
            conn.close()
    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        statuses = list(pool.map(ask, calls))
    assert statuses == [200] * len(calls)
    sampled = {u for u in users if is_sampled(app["app"], u, TODAY, RATE)}
    got = {r["version"]: r for r in stats(server, app)}
    assert got["3.0"]["active_users"] == 200
    assert got["3.0"]["sampled_users"] == len(sampled)
    assert got["3.1"]["active_users"] == 50
    assert got["3.1"]["sampled_users"] == len(sampled & set(users[:50]))
    assert got["3.0"]["stalled_users"] == got["3.0"]["reports"] == 0


def test_check_in_follows_a_policy_changed_on_another_server(db, make_server):
    """The sampling route answers from a cached policy; a change committed
    by another server applies to the very next call, and to the count."""
    app = create_app(db)
    env = {"STALLSCOPE_FAKE_NOW": str(NOON)}
    first, second = make_server(env=env), make_server(env=env)
    allow_everyone(first, app)
    assert check_in(first, app, "before", "4.0")["reason"] == "sampled"
    allow_everyone(second, app, sample_rate=0)
    after = check_in(first, app, "after", "4.0")
    assert after["reason"] == "not_sampled" and after["sample_rate"] == 0, after
    [row] = stats(first, app)
    assert (row["active_users"], row["sampled_users"]) == (2, 1), row
