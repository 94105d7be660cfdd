"""Issue 43, item 4 (SPEC §12): the compose stack's topology as processes,
since no container engine runs here — Debian's nginx on loopback, with
docker/nginx.conf itself (nginx_util.py maps its upstream names to our
ports), in front of two `stallscope serve` on one database and one data
dir. Ingest from many clients through nginx lands exactly once, retries
included; the daily quota holds across instances; a dSYM uploaded through
one instance symbolizes the other's next report at once; and with one
instance SIGKILLed under load nginx sends the rest to the other and every
report that got a 2xx is stored."""
import concurrent.futures
import gzip
import http.client
import json
import re
import threading
import time

import pytest

import nginx_util
from conftest import (Server, assert_storage_consistent, create_app, fixture_of, free_port,
                      psql)
from ingest_util import (Image, allow_everyone, expected_frames, fresh_id, frames_of,
                         native, post, report)

# nginx reaches the instances from loopback: its X-Forwarded-For is
# believed, as the compose file trusts nginx's address.
ENV = {"STALLSCOPE_TRUSTED_PROXIES": "127.0.0.1/32"}


@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


class Topology:
    def __init__(self, a, b, front, nginx):
        self.a, self.b, self.front, self.nginx = a, b, front, nginx
        self.instances = (a, b)


@pytest.fixture
def topology(make_server, tmp_path, db):
    a = make_server(env=ENV)
    # The second instance shares the first one's data dir (the compose
    # file's `data` volume).
    b = make_server(env=ENV, start=False)
    b.data_dir = a.data_dir
    b.start()
    port = free_port()
    conf = nginx_util.render(tmp_path / "nginx", {"stallscope-1": f"127.0.0.1:{a.port}",
                                                  "stallscope-2": f"127.0.0.1:{b.port}"},
                             listen=f"127.0.0.1:{port}")
    nginx = nginx_util.Nginx(conf)
    # The front door: a Server object whose requests go to nginx's port.
    front = Server(db, a.data_dir, tmp_path / "front.log")
    front.port = port
    try:
        nginx.wait_ready(lambda: front.request("GET", "/healthz", timeout=5).status == 200)
        yield Topology(a, b, front, nginx)
    finally:
        nginx.stop()


def app_id(db, app):
    return psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")


def ingest_lines(server, bundle=None):
    """Access log lines of SERVER's ingest requests (of BUNDLE's uploads
    when given)."""
    pattern = (rf"method=POST path=/api/v1/apps/{re.escape(bundle)}/dsyms status=2"
               if bundle else r"method=POST path=/api/v1/ingest\S* status=")
    return len(re.findall(pattern, server.log()))


def assert_counters_recount(db, aid):
    """Every group's counter equals a recount of its reports in SQL, at both
    levels (groups with no report left count 0)."""
    counters = psql(db, f"SELECT level, key, reports FROM groups WHERE app_id = {aid}"
                        " AND reports > 0 ORDER BY 1, 2")
    recount = psql(db, f"SELECT 1, key1, count(*) FROM reports WHERE app_id = {aid}"
                       " GROUP BY key1 UNION ALL"
                       f" SELECT 2, key2, count(*) FROM reports WHERE app_id = {aid}"
                       " GROUP BY key2 ORDER BY 1, 2")
    assert counters == recount
    assert counters, "no groups"


def stored_ids(db, aid):
    return set(psql(db, f"SELECT report_id FROM report_keys WHERE app_id = {aid}").split())


def test_many_clients_through_nginx_land_exactly_once(topology, db, image):
    t = topology
    app = create_app(db)
    allow_everyone(t.front, app)
    f = image.by_function
    stacks = [[f[i], f[i + 1]] for i in range(6)]
    clients, per_client = 16, 24

    def client(c):
        sent, ids, prev = [], {}, None
        for i in range(per_client):
            rid = f"c{c}-{i}-{fresh_id()}"
            r = native(rid, image, stacks[(c + i) % len(stacks)], user=f"u{(c * 7 + i) % 40}")
            sent.append(rid)
            # Every third report twice (a client retrying), every fifth in
            # a batch with a resend of the previous one, every fourth
            # gzipped.
            bodies = [r] * (2 if i % 3 == 0 else 1)
            if i % 5 == 0 and prev:
                bodies = [{"reports": [r, prev]}]
            for body in bodies:
                reply = post(t.front, app, "/api/v1/ingest", body,
                             encoding="gzip" if i % 4 == 0 else None)
                assert reply.status == 202, reply
                assert reply.json["rejected"] == [], reply
                for acc in reply.json["accepted"]:
                    # A resend answers with the id the first stored.
                    assert ids.setdefault(acc["report_id"], acc["id"]) == acc["id"]
            prev = r
        return sent, ids

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        results = list(pool.map(client, range(clients)))
    sent = {rid for s, _ in results for rid in s}
    assert len(sent) == clients * per_client
    # A resend racing its first try (a client that gave up waiting): three
    # copies of each report at once, spread over both instances by nginx.
    racing = [native(f"race-{i}-{fresh_id()}", image, stacks[i % len(stacks)], user="racer")
              for i in range(40)]
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        replies = list(pool.map(lambda r: post(t.front, app, "/api/v1/ingest", r),
                                [r for r in racing for _ in range(3)]))
    assert [r.status for r in replies] == [202] * len(replies), replies
    for i, r in enumerate(racing):
        ids = {rep.json["accepted"][0]["id"] for rep in replies[3 * i:3 * i + 3]}
        assert len(ids) == 1, ids
    sent |= {r["report_id"] for r in racing}
    aid = app_id(db, app)
    # Each report once: one key, one row, counted once in its groups.
    assert stored_ids(db, aid) == sent
    assert psql(db, f"SELECT count(*), count(DISTINCT id) FROM reports WHERE app_id = {aid}") \
        == f"{len(sent)}|{len(sent)}"
    assert_counters_recount(db, aid)
    assert_storage_consistent(db, app["app"])
    assert psql(db, f"SELECT sum(reports) FROM groups WHERE app_id = {aid} AND level = 1") \
        == str(len(sent))
    groups = t.front.request("GET", f"/api/v1/apps/{app['app']}/groups?limit=100",
                             token=app["admin_token"])
    assert sum(g["reports"] for g in groups.json["groups"]) == len(sent)
    # nginx spread the clients over both instances.
    assert all(ingest_lines(s) > 0 for s in t.instances), [ingest_lines(s) for s in t.instances]
    # /metrics is not served through nginx (each instance is scraped directly).
    assert t.front.request("GET", "/metrics").status == 404
    assert t.a.request("GET", "/metrics").status == 200


def test_quota_is_exact_across_instances(topology, db, image):
    t = topology
    app = create_app(db)
    r = t.front.request("PUT", f"/api/v1/apps/{app['app']}/config",
                        body=json.dumps({"sample_rate": 1, "daily_quota": 20}).encode(),
                        token=app["admin_token"])
    assert r.status == 200, r
    reports = [native(fresh_id(), image, [image.plain[0]], user="busy") for _ in range(40)]
    # Five to each instance in turn: each counts the other's.
    for i, rep in enumerate(reports[:10]):
        assert post(t.instances[i % 2], app, "/api/v1/ingest", rep).status == 202
        left = t.instances[(i + 1) % 2].request("GET", "/api/v1/sampling?user_id=busy",
                                                key=app["ingest_key"]).json
        assert left["quota_remaining"] == 20 - (i + 1), left
    # Then 30 at once, half straight to each instance: both count against
    # the same row (user_quota), and against each other.
    rest = reports[10:]
    targets = [t.instances[i % 2] for i in range(len(rest))]
    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        replies = list(pool.map(lambda rt: post(rt[1], app, "/api/v1/ingest", rt[0]),
                                zip(rest, targets)))
    statuses = [r.status for r in replies]
    assert statuses.count(202) == 10 and statuses.count(429) == 20, statuses
    assert {r.error_code for r in replies if r.status == 429} == {"quota_exhausted"}
    replies = [None] * 10 + replies
    aid = app_id(db, app)
    accepted = {rep["report_id"] for rep, r in zip(reports, replies)
                if r is None or r.status == 202}
    assert stored_ids(db, aid) == accepted
    # Every instance, and nginx, now says no more today.
    for s in (t.a, t.b, t.front):
        q = s.request("GET", "/api/v1/sampling?user_id=busy", key=app["ingest_key"]).json
        assert (q["upload"], q["reason"], q["quota_remaining"]) == \
            (False, "quota_exhausted", 0), q
    # Through nginx: refused for a new report, accepted for a resend of a
    # stored one (no quota needed), on whichever instance it lands.
    new = post(t.front, app, "/api/v1/ingest", native(fresh_id(), image, [image.plain[0]],
                                                         user="busy"))
    assert new.status == 429, new
    stored = reports[0]
    for _ in range(4):
        assert post(t.front, app, "/api/v1/ingest", stored).status == 202
    assert len(stored_ids(db, aid)) == 20
    assert psql(db, f"SELECT sum(reports) FROM groups WHERE app_id = {aid} AND level = 1") \
        == "20"


def test_dsym_uploaded_through_one_is_used_by_the_other_at_once(topology, db, image):
    t = topology
    app = create_app(db)
    allow_everyone(t.front, app)
    # Streamed through nginx (proxy_request_buffering off) to one instance:
    # the instance has the upload's temp file (made when the request
    # reaches it) while half the body is still to come. Spooled by nginx
    # first, the request would reach neither before the last byte.
    assert t.a.temp_files() == []
    data = image.dwarf.read_bytes()

    def halves():
        yield data[:len(data) // 2]
        deadline = time.monotonic() + 30
        while not t.a.temp_files():
            assert time.monotonic() < deadline, "the upload did not reach an instance"
            time.sleep(0.02)
        yield data[len(data) // 2:]
    up = t.front.request("POST", f"/api/v1/apps/{app['app']}/dsyms", body=halves(),
                         headers={"Content-Length": str(len(data))},
                         token=app["upload_token"])
    assert up.status in (200, 201), up
    # A server writes its access line after the reply has gone out.
    deadline = time.monotonic() + 10
    while not any(ingest_lines(s, app["app"]) for s in t.instances) and \
            time.monotonic() < deadline:
        time.sleep(0.05)
    served = [s for s in t.instances if ingest_lines(s, app["app"]) == 1]
    assert len(served) == 1, [ingest_lines(s, app["app"]) for s in t.instances]
    other = t.b if served[0] is t.a else t.a
    # Right after the reply, straight to the instance that did not take it.
    stack = [image.inlined[0], image.by_function[1], image.by_function[2]]
    r = post(other, app, "/api/v1/ingest", native(fresh_id(), image, stack))
    assert r.status == 202, r
    rep = report(other, app, r.json["accepted"][0]["id"])
    assert not rep["pending"], rep
    assert rep["images"][0]["status"] == "found"
    assert {fr["status"] for fr in rep["threads"][0]["frames"]} == {"symbolicated"}
    assert frames_of(rep["threads"][0]["frames"]) == expected_frames(image, stack)


class Load:
    """Clients sending new reports through nginx, each retried with the
    same report_id until a 2xx (as a device does on 5xx or a dropped
    connection)."""

    def __init__(self, front, app, image, clients, per_client):
        self.front, self.app, self.image = front, app, image
        self.clients, self.per_client = clients, per_client
        self.lock = threading.Lock()
        self.acked, self.statuses, self.dropped, self.retries = set(), {}, 0, 0

    def count(self, status=None, rid=None, retry=False):
        with self.lock:
            if status is None:
                self.dropped += 1
            else:
                self.statuses[status] = self.statuses.get(status, 0) + 1
            if rid:
                self.acked.add(rid)
            self.retries += retry

    def client(self, c):
        f = self.image.by_function
        for i in range(self.per_client):
            rid = f"k{c}-{i}-{fresh_id()}"
            body = gzip.compress(json.dumps(native(rid, self.image, [f[i % 5], f[i % 5 + 1]],
                                                   user=f"u{c}")).encode())
            for attempt in range(50):
                try:
                    r = self.front.request("POST", "/api/v1/ingest", body=body, timeout=30,
                                           key=self.app["ingest_key"],
                                           headers={"Content-Encoding": "gzip"})
                except (OSError, http.client.HTTPException):
                    self.count(retry=True)
                    time.sleep(0.1)
                    continue
                ok = 200 <= r.status < 300
                self.count(r.status, rid if ok else None, retry=not ok)
                if ok:
                    assert r.json["accepted"][0]["report_id"] == rid, r
                    break
                assert r.status >= 500, r
                time.sleep(0.1)
            else:
                raise AssertionError(f"{rid} never acknowledged")


def test_instance_killed_under_load_loses_no_acknowledged_report(topology, db, image):
    t = topology
    app = create_app(db)
    allow_everyone(t.front, app)
    load = Load(t.front, app, image, clients=12, per_client=40)
    total = load.clients * load.per_client
    with concurrent.futures.ThreadPoolExecutor(load.clients) as pool:
        futures = [pool.submit(load.client, c) for c in range(load.clients)]
        deadline = time.monotonic() + 120
        while len(load.acked) < total // 4:
            assert time.monotonic() < deadline, "load too slow"
            assert not any(fu.done() and fu.exception() for fu in futures)
            time.sleep(0.01)
        t.a.proc.kill()  # SIGKILL: no graceful end for its requests
        t.a.proc.wait()
        acked_at_kill = len(load.acked)
        b_before = ingest_lines(t.b)
        for fu in futures:
            fu.result()
    aid = app_id(db, app)
    stored = stored_ids(db, aid)
    print(f"2xx {sum(n for s, n in load.statuses.items() if s < 300)}, statuses "
          f"{load.statuses}, dropped connections {load.dropped}, retries {load.retries}, "
          f"acknowledged before the kill {acked_at_kill}")
    # Every report was acknowledged in the end, and each one is stored once.
    assert len(load.acked) == total
    assert load.acked <= stored
    assert stored == load.acked
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {aid}") == str(total)
    assert_counters_recount(db, aid)
    assert_storage_consistent(db, app["app"])
    # The kill was under load, and the rest went to the surviving instance.
    assert acked_at_kill < total
    assert ingest_lines(t.b) - b_before >= total - acked_at_kill - 2 * load.clients
    assert t.b.alive() and not t.a.alive()
    # Requests that met the dead instance were passed on to the other by
    # nginx (proxy_next_upstream): answered 202 after two upstreams.
    a_addr, b_addr = (f"127.0.0.1:{s.port}" for s in t.instances)
    passed_on = re.findall(rf"\" 202 .*upstream={re.escape(a_addr)}, {re.escape(b_addr)} ",
                           t.nginx.access_log())
    assert passed_on, t.nginx.access_log()[-3000:]
    errors = t.nginx.error_log()
    print(f"passed on by nginx {len(passed_on)}: refused {errors.count('connect() failed')},"
          f" cut mid-request {len(re.findall('prematurely closed|reset by peer', errors))}")
    # nginx noticed: it logged errors of the dead upstream.
    assert f'upstream: "http://{a_addr}/' in errors, errors[-2000:]
