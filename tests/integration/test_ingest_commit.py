"""Group commit (server/service/ingest_commit.c, schema/008 and 010): reports that arrive
while a transaction is in flight are stored together in a later one, with
every per-report rule intact (quota, resends, counters), and a report the
database refuses fails alone. A psql session holds user_quota locked so
the first transaction waits and the others queue behind it for certain.
The writer keeps a second batch in flight behind the first: the first
report to arrive while the first batch waits goes at once, alone, and the
rest queue behind both."""

import re
import subprocess
import threading
import time

import pytest

from conftest import PSQL, create_app, fixture_of, psql
from ingest_util import Image, allow_everyone, fresh_id, native, post



@pytest.fixture(scope="module")
def image(manifest):
    return Image(fixture_of(manifest, "dwarf", variant="arm64-O2"))


@pytest.fixture
def server(make_server):
    """A server of the test's own: the tests count its commits."""
    return make_server()


def metric(server, name):
    text = server.request("GET", "/metrics", timeout=10).raw.decode()
    return int(re.search(rf"^{name} (-?\d+)$", text, re.M)[1])


def wait_for(what, condition, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


class QuotaLock:
    """Holds user_quota locked in an open transaction until released: an
    ingest transaction storing a sampled report waits on it."""

    def __init__(self, url):
        self.url = url
        self.proc = subprocess.Popen([PSQL, url, "-v", "ON_ERROR_STOP=1", "-Aq"],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.proc.stdin.write("BEGIN;\nLOCK TABLE user_quota IN EXCLUSIVE MODE;\n")
        self.proc.stdin.flush()
        wait_for("the lock", lambda: psql(url, (
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
            " WHERE c.relname = 'user_quota' AND l.mode = 'ExclusiveLock'"
            " AND l.granted")) == "1")

    def release(self):
        if self.proc.poll() is None:
            _, err = self.proc.communicate("COMMIT;\n", timeout=60)
            assert self.proc.returncode == 0, err


def post_waiting(server, app, bodies, waiting):
    """Posts BODIES from a thread each, the next once WAITING(i) says the
    previous one waits, so they queue in order; returns the threads and the
    replies they fill in, in order."""
    replies = [None] * len(bodies)

    def one(i):
        replies[i] = post(server, app, "/api/v1/ingest", bodies[i])

    threads = []
    for i in range(len(bodies)):
        threads.append(threading.Thread(target=one, args=(i,)))
        threads[-1].start()
        wait_for(f"report {i} to wait", lambda: waiting(i))
    return threads, replies


def ingest_waits_on_a_lock(db):
    return psql(db, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE '%ingest_reports%'") == "1"


def batches_in_flight(server):
    return metric(server, "stallscope_ingest_batches_in_flight")


def queue_behind_a_waiting_commit(server, db, app, first, rest, meanwhile=None):
    """Stores FIRST in a transaction made to wait, sends REST[0] as the
    batch behind it and queues the rest of REST behind both, calls
    MEANWHILE(replies) while all of them wait if given, then lets
    everything run; returns FIRST's and REST's replies."""
    lock = QuotaLock(db)
    try:
        t_first, r_first = post_waiting(server, app, [first],
                                        lambda _: ingest_waits_on_a_lock(db))
        queued = metric(server, "stallscope_ingest_queued_reports")
        threads, replies = post_waiting(server, app, rest, lambda i: batches_in_flight(
            server) == 2 and metric(server, "stallscope_ingest_queued_reports") == queued + i + 1)
        if meanwhile:
            meanwhile(r_first + replies)
    finally:
        lock.release()
    for t in t_first + threads:
        t.join(60)
    return r_first[0], replies


def test_reports_queued_meanwhile_share_one_transaction(server, db, image):
    app = create_app(db)
    allow_everyone(server, app, daily_quota=3)
    stack = [image.by_function[1], image.by_function[2]]
    resent = fresh_id()
    # Ten users once each, one user five times (quota 3), one report twice:
    # its second copy waits for the transaction after (a batch never holds
    # one report_id twice). user-0 goes alone, behind the first.
    rest = ([native(fresh_id(), image, stack, user=f"user-{i}") for i in range(10)]
            + [native(fresh_id(), image, stack, user="busy") for _ in range(5)]
            + [native(resent, image, stack, user="twice")] * 2)
    commits = metric(server, "stallscope_ingest_commits_total")
    reports = metric(server, "stallscope_ingest_commit_reports_total")

    first, replies = queue_behind_a_waiting_commit(
        server, db, app, native(fresh_id(), image, stack, user="first"), rest)

    assert first.status == 202, first
    assert metric(server, "stallscope_ingest_commits_total") == commits + 4
    assert metric(server, "stallscope_ingest_commit_reports_total") == reports + 1 + len(rest)
    assert all(r.status == 202 for r in replies[:10]), replies[:10]
    assert sorted(r.status for r in replies[10:15]) == [202, 202, 202, 429, 429]
    assert [r.status for r in replies[15:]] == [202, 202]
    assert replies[15].json["accepted"] == replies[16].json["accepted"]

    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    stored = 1 + 10 + 3 + 1
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {app_id}") == str(stored)
    # first, user-0…9, busy, twice
    assert psql(db, f"SELECT level, reports, users FROM groups WHERE app_id = {app_id}"
                    " ORDER BY level").splitlines() == [f"1|{stored}|13", f"2|{stored}|13"]
    assert psql(db, f"SELECT reports FROM user_quota WHERE app_id = {app_id}"
                    " AND user_id = 'busy'") == "3"


def test_a_report_goes_to_the_database_while_a_batch_waits_there(server, db, image):
    """The writer listens for reports while it waits for an answer: one that
    arrives while a batch waits in the database is sent at once, as the next
    batch down the pipeline, so the database finds it when the first
    commits, instead of waiting for the writer to read that answer first."""
    app = create_app(db)
    allow_everyone(server, app)
    stack = [image.by_function[1], image.by_function[2]]
    commits = metric(server, "stallscope_ingest_commits_total")
    lock = QuotaLock(db)
    try:
        t_first, r_first = post_waiting(server, app, [native(fresh_id(), image, stack)],
                                        lambda _: ingest_waits_on_a_lock(db))
        assert batches_in_flight(server) == 1
        t_second, r_second = post_waiting(server, app, [native(fresh_id(), image, stack)],
                                          lambda _: batches_in_flight(server) == 2)
        assert r_first == [None] and r_second == [None], (r_first, r_second)
    finally:
        lock.release()
    for t in t_first + t_second:
        t.join(60)
    assert r_first[0].status == 202 and r_second[0].status == 202, (r_first, r_second)
    assert metric(server, "stallscope_ingest_commits_total") == commits + 2
    assert batches_in_flight(server) == 0


def test_a_report_the_database_refuses_fails_alone(server, db, image):
    app = create_app(db)
    allow_everyone(server, app)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    stack = [image.by_function[1], image.by_function[2]]
    psql(db, f"""
        CREATE FUNCTION refuse_poison_{app_id}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'poisoned report'; END $$;
        CREATE TRIGGER refuse_poison_{app_id} BEFORE INSERT ON report_keys FOR EACH ROW
          WHEN (NEW.app_id = {app_id} AND NEW.report_id LIKE 'poison-%')
          EXECUTE FUNCTION refuse_poison_{app_id}();""")
    try:
        rest = [native(fresh_id(), image, stack, user=f"user-{i}") for i in range(5)]
        rest.insert(2, native("poison-" + fresh_id(), image, stack, user="poisoner"))
        first, replies = queue_behind_a_waiting_commit(
            server, db, app, native(fresh_id(), image, stack, user="first"), rest)
    finally:
        psql(db, f"DROP TRIGGER refuse_poison_{app_id} ON report_keys;"
                 f" DROP FUNCTION refuse_poison_{app_id}();")

    assert first.status == 202, first
    assert replies[2].status == 500 and replies[2].json["error"]["code"], replies[2]
    others = replies[:2] + replies[3:]
    assert all(r.status == 202 for r in others), others
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {app_id}") == "6"
    assert psql(db, f"SELECT reports FROM groups WHERE app_id = {app_id} AND level = 1") == "6"


def test_a_resend_stored_meanwhile_by_another_transaction(server, db, image):
    """The same report_id committed by a concurrent transaction (another
    server, a resend under another user id) after this batch looked for it:
    the key insert loses, and the report is the other's duplicate, counted
    nowhere."""
    app = create_app(db)
    allow_everyone(server, app)
    app_id = psql(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    stack = [image.by_function[1], image.by_function[2]]
    rid = fresh_id()
    other = subprocess.Popen([PSQL, db, "-v", "ON_ERROR_STOP=1", "-Aqt"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        other.stdin.write("BEGIN;\nINSERT INTO report_keys (app_id, report_id, id, received_day)"
                          f" VALUES ({app_id}, '{rid}', nextval('report_ids'), current_date)"
                          " RETURNING id;\n")
        other.stdin.flush()
        other_id = int(other.stdout.readline())
        threads, replies = post_waiting(
            server, app, [native(rid, image, stack, user="racer")],
            lambda _: ingest_waits_on_a_lock(db))
    finally:
        _, err = other.communicate("COMMIT;\n", timeout=60)
        assert other.returncode == 0, err
    threads[0].join(60)

    assert replies[0].status == 202, replies[0]
    assert replies[0].json["accepted"] == [{"report_id": rid, "id": other_id}]
    assert psql(db, f"SELECT count(*) FROM reports WHERE app_id = {app_id}") == "0"
    assert psql(db, f"SELECT count(*) FROM groups WHERE app_id = {app_id}") == "0"
    assert psql(db, f"SELECT count(*) FROM user_quota WHERE app_id = {app_id}") == "0"


def test_other_connections_are_answered_while_reports_wait(server, db, image):
    """Each connection has a thread of its own: requests waiting for a
    commit (here ten, more than the database connections requests share)
    hold back no one else, whether the next request asks the database or
    not."""
    app = create_app(db)
    allow_everyone(server, app)
    stack = [image.by_function[1], image.by_function[2]]

    def others_answered(waiting):
        for _ in range(5):
            assert server.request("GET", "/healthz", timeout=10).status == 200
            config = server.request("GET", f"/api/v1/apps/{app['app']}/config",
                                    token=app["admin_token"], timeout=10)
            assert config.status == 200 and config.json["sample_rate"] == 1, config
        assert all(r is None for r in waiting), waiting

    first, replies = queue_behind_a_waiting_commit(
        server, db, app, native(fresh_id(), image, stack),
        [native(fresh_id(), image, stack) for _ in range(9)], others_answered)
    assert first.status == 202, first
    assert all(r.status == 202 for r in replies), replies
