"""Issue 43 item 2, SPEC §12: the dashboard's aggregate reads on a
streaming replica (STALLSCOPE_READ_DATABASE_URL). There they read what the
primary's folds counted, write nothing, and say how current they are
("as_of", docs/SERVER.md "Read replica"); with the replica down they fall
back to the primary, which folds first; /metrics shows the replica's lag.

The replica is real: pg_basebackup -R of the test's own cluster, started
as the cluster's owner on a free port, streaming from it."""
import datetime
import getpass
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from conftest import PSQL, create_app, free_port, migrate, psql, run
from ingest_util import allow_everyone
from test_lifecycle import api, ingest, key_of, system_report

PG_BIN = Path(PSQL).parent
# Every read route that runs on the replica (docs/SERVER.md), KEY the
# level-1 group they ask about.
READ_ROUTES = ["/groups", "/groups?level=2", "/groups/{key}", "/groups/{key}/tree",
               "/groups/{key}/breakdown", "/groups/{key}/events", "/dimensions", "/stats",
               "/compare?base=1.0&target=2.0"]


def as_owner(*cmd):
    """CMD as the cluster's owner, as scripts/pg.sh runs PostgreSQL."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *map(str, cmd)]
    return list(map(str, cmd))


def owner():
    """The cluster's superuser, as scripts/pg.sh names it."""
    return "postgres" if os.geteuid() == 0 else getpass.getuser()


class Replica:
    """A hot standby of CLUSTER in DIR, streaming from it."""

    def __init__(self, cluster, directory):
        self.primary = cluster
        self.dir = Path(directory)
        self.port = None

    def make(self):
        data = self.primary.dir / "data"
        # Replication connections match only a "replication" line: the
        # owner's, on the socket, as pg.sh admits it (rewritten at its next
        # start, which this test does not make).
        with open(data / "pg_hba.conf", "a") as f:
            f.write(f"local replication {owner()} peer map=admin\n")
        psql(self.primary.superuser_url("postgres"), "SELECT pg_reload_conf()")
        self.dir.mkdir(mode=0o700)
        (self.dir / "socket").mkdir(mode=0o700)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
            shutil.chown(self.dir / "socket", "postgres", "postgres")
        port = (self.primary.dir / "port").read_text().strip()
        run(as_owner(PG_BIN / "pg_basebackup", "-D", self.dir / "data", "-h",
                     self.primary.dir / "socket", "-p", port, "-U", owner(), "-R",
                     "-X", "stream", "-c", "fast"))
        self.port = free_port()
        return self.start()

    def start(self):
        opts = (f"-p {self.port} -k {self.dir}/socket -c listen_addresses=127.0.0.1"
                " -c unix_socket_permissions=0700 -c fsync=off")
        run(as_owner(PG_BIN / "pg_ctl", "-D", self.dir / "data", "-l", self.dir / "log",
                     "-o", opts, "-w", "-t", "60", "start"))
        return self

    def stop(self):
        run(as_owner(PG_BIN / "pg_ctl", "-D", self.dir / "data", "-m", "fast", "-w", "stop"),
            check=False)

    def url(self, db_url):
        """DB_URL (the role's, on the primary) on the replica's port."""
        return re.sub(r"@127\.0\.0\.1:\d+/", f"@127.0.0.1:{self.port}/", db_url)

    def su_url(self, name):
        return f"postgresql:///{name}?host={self.dir}/socket&port={self.port}&user={owner()}"


@pytest.fixture
def replica(cluster, tmp_root):
    r = Replica(cluster, tmp_root / f"replica-{os.getpid()}").make()
    yield r
    r.stop()


def q(url, sql):
    """SQL on URL as it is: nothing folded first (the replica cannot)."""
    return psql(url, sql, fold_first=False)


def wait_for(what, check, seconds=60):
    """Polls CHECK until it returns something true; fails naming WHAT."""
    deadline = datetime.datetime.now() + datetime.timedelta(seconds=seconds)
    while datetime.datetime.now() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    pytest.fail(f"never: {what}")


def primary_now(db):
    """The primary's clock, to the second as as_of is."""
    return when(q(db, "SELECT to_char(now() AT TIME ZONE 'UTC', "
                      "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"))


def when(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def groups(server, app):
    r = api(server, app, "GET", "/groups")
    assert r.status == 200, r
    return {g["key"]: g["reports"] for g in r.json["groups"]}, r.json["as_of"]


def metrics(server):
    r = server.request("GET", "/metrics")
    assert r.status == 200, r
    text = r.raw.decode()
    in_use = re.search(r"^stallscope_read_replica_in_use (\d)$", text, re.M)
    lag = re.search(r"^stallscope_read_replica_lag_seconds (\S+)$", text, re.M)
    assert in_use and lag, text
    return int(in_use.group(1)), float(lag.group(1))


def test_reads_go_to_the_replica_write_nothing_and_fall_back(cluster, make_server, replica):
    """Reads served by the replica count what the primary's folds counted
    and no more (the deltas stay waiting on the primary: nothing folded
    them), with as_of the fold clock while deltas wait and the replayed
    moment once none do; its statistics count them and the primary's
    sessions include no reader. Stopped, the primary answers (folding
    first) until it is back."""
    db = cluster.create_db("read_replica")
    migrate(db)
    app = create_app(db)
    app_id = q(db, f"SELECT id FROM apps WHERE bundle_id = '{app['app']}'")
    rdb, rsu = replica.url(db), replica.su_url("read_replica")
    # The folder's next pass is an hour away: only this test folds.
    server = make_server(db_url=db, env={"STALLSCOPE_READ_DATABASE_URL": rdb,
                                         "STALLSCOPE_FOLD_INTERVAL": "3600",
                                         "STALLSCOPE_REPROCESS_INTERVAL": "3600"})
    allow_everyone(server, app)
    # Its folder's first pass is over once it holds the coordinator's
    # lease (server/service/delta_folder.c takes it after the fold: the
    # advisory lock ('S' 'T' 0 2, 0), store/leases.c): no fold of its own
    # follows for an hour.
    wait_for("the folder's first pass", lambda: q(db, (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND classid = x'53540002'::int::oid AND objid = 0 AND objsubid = 2"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"))
        == "1")

    def replayed(sql, want):
        return wait_for(f"{sql} = {want} on the replica", lambda: q(rdb, sql) == want)

    ingest(server, app, *[system_report(0x100, version="1.0") for _ in range(3)])
    waiting = f"SELECT count(*) FROM group_deltas WHERE app_id = {app_id}"
    replayed(waiting, "3")
    listed, as_of = groups(server, app)
    # Never folded: nothing counted and no moment to vouch for.
    assert (listed, as_of) == ({}, None)
    assert q(db, waiting) == "3", "a read on the replica folded"

    before_fold = primary_now(db)
    q(db, f"SELECT fold_group_deltas({app_id})")
    clock = q(db, "SELECT to_char(folded_through AT TIME ZONE 'UTC', "
                  f"'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM fold_clocks WHERE app_id = {app_id}")
    assert when(clock) >= before_fold
    listed, as_of = wait_for("the fold on the replica",
                             lambda: (lambda g: g if g[0] else None)(groups(server, app)))
    key = next(iter(listed))
    assert listed == {key: 3}
    # No delta waits: the moment of the last commit replayed.
    assert when(as_of) >= when(clock)

    ingest(server, app, *[system_report(0x100, version="2.0") for _ in range(2)])
    replayed(waiting, "2")
    listed, waiting_as_of = groups(server, app)
    assert listed == {key: 3}
    assert waiting_as_of == clock, "deltas wait: as_of is the fold clock"
    assert q(db, waiting) == "2", "a read on the replica folded"

    # Every aggregate read answers from the replica (none of them writes:
    # a write there is an error), each with as_of.
    for path in READ_ROUTES:
        r = api(server, app, "GET", path.format(key=key))
        assert r.status == 200, (path, r, server.log()[-2000:])
        assert r.json["as_of"] == clock, (path, r)
    assert q(db, waiting) == "2"

    # The replica's statistics count the reads; its sessions are the
    # server's reader, which the primary's are not.
    # Scans of the groups table: only the server's reads make them (this
    # test's queries of the replica read neither it nor its indexes).
    commits = ("SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) FROM pg_stat_user_tables"
               " WHERE relname = 'groups'")
    reads_before = int(q(rsu, commits))
    for _ in range(20):
        groups(server, app)
    wait_for("20 more commits on the replica", lambda: int(q(rsu, commits)) >= reads_before + 20)
    readers = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'stallscope-read'"
    assert int(q(rsu, readers)) >= 1
    assert q(cluster.superuser_url("read_replica"), readers) == "0"
    in_use, lag = metrics(server)
    assert in_use == 1 and lag >= 0

    before_fold = primary_now(db)
    q(db, f"SELECT fold_group_deltas({app_id})")
    listed, later = wait_for("the second fold on the replica",
                             lambda: (lambda g: g if g[0] == {key: 5} else None)(
                                 groups(server, app)))
    assert when(later) >= before_fold

    # Down: the primary answers, folding first (the next report counts at
    # once), and /metrics says so.
    replica.stop()
    ingest(server, app, system_report(0x100, version="2.0"))
    for path in READ_ROUTES:
        r = api(server, app, "GET", path.format(key=key))
        assert r.status == 200, (path, r, server.log()[-2000:])
        assert when(r.json["as_of"]) >= when(later), (path, r)
    assert groups(server, app)[0] == {key: 6}
    assert q(db, waiting) == "0"
    in_use, lag = metrics(server)
    assert in_use == 0 and lag != lag  # NaN: unknown

    # Back: after the pause the pool leaves it, the reads go there again.
    replica.start()
    reads_before = int(q(rsu, commits))
    wait_for("reads back on the replica", lambda: (groups(server, app),
                                                   int(q(rsu, commits)) > reads_before + 5)[1])
    assert metrics(server)[0] == 1, server.log()[-3000:]

    # A server folding every second (the default) on the primary: the
    # replica's reads follow without anyone folding for them.
    make_server(db_url=db)
    before_ingest = primary_now(db)
    ingest(server, app, system_report(0x100, version="2.0"))
    listed, after = wait_for("the background fold on the replica",
                             lambda: (lambda g: g if g[0] == {key: 7} else None)(
                                 groups(server, app)))
    assert when(after) >= before_ingest


def test_primary_reads_carry_as_of_and_count_every_report(db, server):
    """Without a replica the reads fold first, as before, and say as of
    when: their transaction's start, after every report acknowledged."""
    app = create_app(db)
    allow_everyone(server, app)
    start = primary_now(db)
    ingest(server, app, system_report(0x200), system_report(0x200))
    listed, as_of = groups(server, app)
    assert list(listed.values()) == [2]
    assert when(as_of) >= start
    assert metrics_absent(server)


def metrics_absent(server):
    """A server without a replica shows no replica gauges."""
    r = server.request("GET", "/metrics")
    return r.status == 200 and b"stallscope_read_replica" not in r.raw
