"""Issue 43 item 1, SPEC §12: servers sharing one database share its
background work by leases (server/service/leases.c): an app's deltas are
folded by the one server holding its lease, the apps are spread over the
servers alive, and a server that dies gives its share to the others at
once. Each test has a database of its own: the suite's shared servers
would otherwise hold leases there."""

import json
import re
import threading
import time

from conftest import assert_storage_consistent, create_app, migrate, psql
from ingest_util import allow_everyone, fresh_id, post
from test_lifecycle import system_report

LEASE_HOLDERS = ("SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                 " WHERE l.locktype = 'advisory' AND l.granted"
                 " AND a.application_name = 'stallscope-leases'"
                 " AND l.classid = {job} AND l.objsubid = 2"
                 # The suite's other databases have servers and leases too.
                 " AND l.database = (SELECT oid FROM pg_database"
                 " WHERE datname = current_database())")
FOLD_CLASS = 0x53540001


def metric(server, name):
    text = server.request("GET", "/metrics").raw.decode()
    return int(re.search(rf"^{re.escape(name)} (\d+)$", text, re.M)[1])


def folded(server):
    return metric(server, "stallscope_background_folded_deltas_total")


def fold_leases(server):
    return metric(server, 'stallscope_leases_held{job="fold"}')


def waiting_deltas(db):
    # Read as the table is: psql() would fold first.
    return int(psql(db, "SELECT count(*) FROM group_deltas", fold_first=False))


def wait_for(predicate, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def ingest_through(servers, app, batches, offset=0x100):
    """BATCHES small batches, alternating between SERVERS, a little apart
    so several folds run meanwhile. No read: a read folds for itself."""
    for i in range(batches):
        r = post(servers[i % len(servers)], app, "/api/v1/ingest",
                 {"reports": [system_report(offset + 0x10 * (j % 3), user=f"u{i}-{j}")
                              for j in range(4)]})
        assert r.status == 202, r
        time.sleep(0.25)


def test_one_server_folds_an_app_and_the_other_takes_over_when_it_dies(cluster, make_server):
    """Two servers, one app, reports through both: only one of them folds
    (on a build without leases both did, every second). SIGKILLed, its
    lease ends with its connection: the other folds what comes next,
    without any read asking it to."""
    db = cluster.create_db("it_leases_fold")
    migrate(db)
    a, b = make_server(db_url=db), make_server(db_url=db)
    app = create_app(db)
    allow_everyone(a, app)
    ingest_through([a, b], app, 16)
    assert wait_for(lambda: waiting_deltas(db) == 0)
    counts = sorted([folded(a), folded(b)])
    assert counts[0] == 0 and counts[1] == 64, counts
    assert int(psql(db, LEASE_HOLDERS.format(job=FOLD_CLASS), fold_first=False)) == 1
    holder, other = (a, b) if folded(a) else (b, a)
    assert (fold_leases(holder), fold_leases(other)) == (1, 0)

    holder.kill()
    ingest_through([other], app, 4, offset=0x800)
    assert wait_for(lambda: waiting_deltas(db) == 0)
    assert folded(other) == 16 and fold_leases(other) == 1
    assert psql(db, "SELECT sum(reports) FROM groups WHERE level = 1") == "80"
    assert_storage_consistent(db)


def test_apps_are_shared_between_the_servers_alive(cluster, make_server):
    """Four apps with reports, two servers: two apps each, whichever took
    them first; every app's deltas are folded."""
    db = cluster.create_db("it_leases_share")
    migrate(db)
    a, b = make_server(db_url=db), make_server(db_url=db)
    apps = [create_app(db) for _ in range(4)]
    for app in apps:
        allow_everyone(a, app)
    stop = threading.Event()
    refused = []

    def keep_ingesting():
        i = 0
        while not stop.is_set():
            for app in apps:
                r = post(a if i % 2 else b, app, "/api/v1/ingest",
                         {"reports": [system_report(0x100, user=f"u{i}")]})
                if r.status != 202:
                    refused.append(r)
            i += 1
            time.sleep(0.1)

    t = threading.Thread(target=keep_ingesting)
    t.start()
    try:
        assert wait_for(lambda: (fold_leases(a), fold_leases(b)) == (2, 2)), \
            (fold_leases(a), fold_leases(b))
    finally:
        stop.set()
        t.join()
    assert refused == []
    assert wait_for(lambda: waiting_deltas(db) == 0)
    assert folded(a) > 0 and folded(b) > 0


def coordinators(*servers):
    return [metric(s, 'stallscope_leases_held{job="coordinator"}') for s in servers]


def test_one_server_does_the_database_wide_chores_until_it_dies(cluster, make_server):
    """Retention, reopening ignores and the reprocessing sweep are one
    server's (the lease of the database-wide chores): of three, exactly
    one holds it; killed, another takes it at its next pass, and opens a
    group whose ignore ran out, as the dead one would have."""
    db = cluster.create_db("it_leases_chores")
    migrate(db)
    servers = [make_server(db_url=db) for _ in range(3)]
    assert wait_for(lambda: sorted(coordinators(*servers)) == [0, 0, 1])
    holder = servers[coordinators(*servers).index(1)]
    rest = [s for s in servers if s is not holder]
    holder.kill()
    assert wait_for(lambda: sorted(coordinators(*rest)) == [0, 1])

    app = create_app(db)
    allow_everyone(rest[0], app)
    r = post(rest[0], app, "/api/v1/ingest", {"reports": [system_report(0x100)]})
    assert r.status == 202, r
    listed = rest[0].request("GET", f"/api/v1/apps/{app['app']}/groups?level=1",
                             token=app["admin_token"]).json["groups"]
    key = listed[0]["key"]
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 2))
    r = rest[1].request("PATCH", f"/api/v1/apps/{app['app']}/groups/{key}",
                        body=json.dumps({"status": "ignored", "until": until}).encode(),
                        token=app["admin_token"])
    assert r.status == 200, r

    def status():
        return rest[0].request("GET", f"/api/v1/apps/{app['app']}/groups/{key}",
                               token=app["admin_token"]).json["group"]["status"]
    assert status() == "ignored"
    assert wait_for(lambda: status() == "open", 15)
