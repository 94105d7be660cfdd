#!/usr/bin/env python3
"""dashboard_measure.py — the measuring half of bench/dashboard.sh, once the
data set is loaded and the server that took it is still running:

  1. idle: the CPU time of PostgreSQL's processes (the postmaster and its
     children, from /proc) and of the server over IDLE_SECONDS with no
     request, as % of one core;
  2. sizes: pg_database_size ÷ reports stored, and the biggest relations
     (partitions summed into their parent);
  3. routes, cold: for each dashboard route, the server stopped, the
     PostgreSQL cluster restarted (its shared buffers start empty; the
     kernel's page cache is not dropped: the machine is shared), the server
     started, then one timed request on a fresh connection;
  4. routes, warm: one server for all; one untimed call per route, then
     REPEATS rounds over every route on a kept-alive connection: p50, p95
     (nearest rank), max in ms.
Prints the table and writes the run's JSON (RESULT).

Routes and query strings are the API of SPEC §7 that web/*.js calls, the
same on every build, so a before/after pair times the same requests.

Environment (set by dashboard.sh): BIN ROOT WORK PORT APP ADMIN_TOKEN
SERVER_PID DATABASE_URL REPORTS_STORED LOAD_JSON RESULT LABEL REPEATS
IDLE_SECONDS DAYS SEED CONCURRENCY TODAY, and LOADED_FROM when the rows were
loaded by an earlier run (dashboard.sh LOADED=).
"""
import datetime
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse

E = os.environ
WORK, PORT, APP = E["WORK"], int(E["PORT"]), E["APP"]
AUTH = {"Authorization": f"Bearer {E['ADMIN_TOKEN']}"}
PG_DIR = f"{WORK}/pg"
# dashboard.sh PLATFORM=android (issue 44): the Android app's filter values,
# and its own routes (startup, frames, method mappings) beside the others.
ANDROID = E.get("PLATFORM") == "android"
OS, DEVICE, KIND = ("14", "Pixel 7", "anr") if ANDROID else ("17.2", "iPhone14,2", "hang")


def psql(sql):
    return subprocess.run(["scripts/pg.sh", "psql", PG_DIR, "bench", "-At", "-c", sql],
                          capture_output=True, text=True, check=True).stdout.strip()


def cpu_ticks(pid):
    """utime + stime of PID in clock ticks, or 0 when it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        return 0


def alive(pid):
    """Whether PID runs (a zombie its parent has not reaped yet has ended)."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def postgres_pids():
    master = int(open(f"{PG_DIR}/data/postmaster.pid").readline())
    pids = [master]
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == master:
                pids.append(int(d))
    return pids


def idle(seconds, server_pid):
    """PostgreSQL's and the server's CPU over SECONDS, % of one core."""
    tick = os.sysconf("SC_CLK_TCK")
    before = {pid: cpu_ticks(pid) for pid in postgres_pids()}
    srv0, t0 = cpu_ticks(server_pid), time.monotonic()
    time.sleep(seconds)
    # Per process: backends started meanwhile count whole; ones that ended
    # meanwhile (an autovacuum worker) are lost, never counted negative.
    after = {pid: cpu_ticks(pid) for pid in postgres_pids()}
    srv1, t1 = cpu_ticks(server_pid), time.monotonic()
    pg = sum(ticks - before.get(pid, 0) for pid, ticks in after.items())
    pids = set(before) | set(after)
    pct = lambda d: round(100.0 * d / tick / (t1 - t0), 2)
    return {"seconds": round(t1 - t0, 1), "postgres_cpu_pct": pct(pg),
            "server_cpu_pct": pct(srv1 - srv0), "postgres_processes": len(pids)}


def sizes(reports):
    db = int(psql("SELECT pg_database_size(current_database())"))
    rows = psql("""
        SELECT c.relname, sum(pg_relation_size(t.relid)),
               sum(pg_table_size(t.relid) - pg_relation_size(t.relid)),
               sum(pg_indexes_size(t.relid))
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace,
             LATERAL (SELECT relid FROM pg_partition_tree(c.oid) UNION SELECT c.oid) t
        WHERE n.nspname = 'stallscope' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        GROUP BY c.relname ORDER BY sum(pg_total_relation_size(t.relid)) DESC LIMIT 10""")
    rels = []
    for line in rows.splitlines():
        name, heap, toast, index = line.split("|")
        heap, toast, index = int(heap), int(toast), int(index)
        rels.append({"relation": name, "heap": heap, "toast_and_maps": toast, "indexes": index,
                     "bytes_per_report": round((heap + toast + index) / max(reports, 1), 1)})
    return {"database_bytes": db, "bytes_per_report": round(db / max(reports, 1), 1),
            "relations": rels}


class Server:
    """The build under test, serving the bench database."""

    def __init__(self):
        self.proc = None

    def start(self):
        env = dict(E, STALLSCOPE_LISTEN=f"127.0.0.1:{PORT}",
                   STALLSCOPE_DATA_DIR=f"{WORK}/data",
                   STALLSCOPE_DATABASE_URL=E["DATABASE_URL"])
        log = open(f"{WORK}/server.log", "a")
        self.proc = subprocess.Popen([E["BIN"], "serve"], cwd=E["ROOT"], env=env,
                                     stdout=log, stderr=log)
        for _ in range(300):
            try:
                c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=5)
                c.request("GET", "/healthz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        sys.exit("dashboard_measure: the server did not start (see server.log)")

    def stop(self):
        if self.proc:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)
            self.proc = None


def get(conn, path):
    """(ms, status, parsed body or None) of one GET on CONN."""
    t0 = time.perf_counter()
    conn.request("GET", path, headers=AUTH)
    resp = conn.getresponse()
    body = resp.read()
    ms = (time.perf_counter() - t0) * 1e3
    try:
        return ms, resp.status, json.loads(body)
    except ValueError:
        return ms, resp.status, None


def mark_statuses(conn, a):
    """A team's triage on the data set: of the 1,000 biggest groups
    (ranks 51 to 1,050, so the first page keeps its groups), every second
    resolved in 8.4.0 and every fourth ignored, as the status filter finds
    them. A status already set (a LOADED rerun) is set again. False for a
    build before statuses (PATCH answers 405): the status routes are left
    out."""
    keys, cursor = [], None
    while len(keys) < 1050:
        page = get(conn, f"{a}/groups?level=1&limit=500&sort=count" +
                   (f"&cursor={urllib.parse.quote(cursor)}" if cursor else ""))[2]
        keys += [g["key"] for g in page["groups"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    for i, key in enumerate(keys[50:1050]):
        body = ({"status": "resolved", "resolved_in": "8.4.0"} if i % 2 == 0 else
                {"status": "ignored", "until_reports": 1000000} if i % 4 == 1 else None)
        if body:
            conn.request("PATCH", f"{a}/groups/{key}", body=json.dumps(body).encode(),
                         headers=AUTH)
            resp = conn.getresponse()
            resp.read()
            if resp.status == 405:
                return False
            if resp.status != 200:
                sys.exit(f"dashboard_measure: PATCH {key}: {resp.status}")
    return True


def discover(conn, today):
    """The routes to time, with the keys, ids and cursors they need."""
    a = f"/api/v1/apps/{APP}"
    q = lambda **kw: "?" + urllib.parse.urlencode(kw)
    week = (datetime.date.fromisoformat(today) - datetime.timedelta(days=6)).isoformat()
    g = lambda **kw: f"{a}/groups" + q(level=1, limit=50, **kw)
    routes = [
        ("groups sort=count", g(sort="count")),
        ("groups sort=users", g(sort="users")),
        ("groups sort=last_seen", g(sort="last_seen")),
        ("groups sort=stall_ms", g(sort="stall_ms")),
        ("groups sort=stall_ms version=", g(sort="stall_ms", version="8.4.0")),
        ("groups version=", g(version="8.4.0")),
        ("groups os_version=", g(os_version=OS)),
        ("groups device=", g(device=DEVICE)),
        ("groups kind=", g(kind=KIND)),
        ("groups version= device=", g(version="8.4.0", device=DEVICE)),
        ("groups device= kind=", g(device=DEVICE, kind=KIND)),
        ("groups sort=users version= os_version=",
         g(sort="users", version="8.4.0", os_version=OS)),
        ("groups from=to=today", g(**{"from": today, "to": today})),
        ("groups 7 days", g(**{"from": week, "to": today})),
        ("groups 7 days version=", g(version="8.4.0", **{"from": week, "to": today})),
        ("groups level=2", f"{a}/groups" + q(level=2, limit=50)),
    ]
    first = get(conn, routes[0][1])[2]
    routes.append(("groups page 2", g(sort="count", cursor=first["next_cursor"])))
    # The list as the dashboard opens it (SPEC §11.1: resolved and ignored
    # hidden), and one status alone.
    routes += [] if not mark_statuses(conn, a) else [
        ("groups status=open,regressed", g(status="open,regressed")),
        ("groups status=open,regressed sort=stall_ms 7 days",
         g(status="open,regressed", sort="stall_ms", **{"from": week, "to": today})),
        ("groups status=open,regressed version=", g(status="open,regressed", version="8.4.0")),
        ("groups status=resolved", g(status="resolved")),
    ]
    key1 = first["groups"][0]["key"]
    detail = get(conn, f"{a}/groups/{key1}")[2]
    key2 = detail["subgroups"][0]["key"]
    reps = f"{a}/groups/{key1}/{key2}/reports"
    page1 = get(conn, reps + q(limit=50))[2]
    rid = page1["reports"][0]["id"]
    routes += [
        ("group detail (+subgroups)", f"{a}/groups/{key1}"),
        ("group detail version=", f"{a}/groups/{key1}" + q(version="8.4.0")),
        ("group detail version= device=",
         f"{a}/groups/{key1}" + q(version="8.4.0", device=DEVICE)),
        ("group detail 7 days", f"{a}/groups/{key1}" + q(**{"from": week, "to": today})),
        ("group tree (largest group)", f"{a}/groups/{key1}/tree"),
        ("group tree version=", f"{a}/groups/{key1}/tree" + q(version="8.4.0")),
        ("group breakdown (largest group)", f"{a}/groups/{key1}/breakdown"),
        ("group breakdown 7 days",
         f"{a}/groups/{key1}/breakdown" + q(**{"from": week, "to": today})),
        ("group breakdown version=", f"{a}/groups/{key1}/breakdown" + q(version="8.4.0")),
        ("group breakdown version= device=",
         f"{a}/groups/{key1}/breakdown" + q(version="8.4.0", device=DEVICE)),
        ("group breakdown level2=", f"{a}/groups/{key1}/breakdown" + q(level2=key2)),
        ("compare 8.3.0 → 8.4.0", f"{a}/compare" + q(base="8.3.0", target="8.4.0")),
        # What the dashboard asks for: the first 200 rows and the tally.
        ("compare limit=200", f"{a}/compare" + q(base="8.3.0", target="8.4.0", limit=200)),
        ("stats", f"{a}/stats"),
        ("group reports", reps + q(limit=50)),
        ("group reports page 2", reps + q(limit=50, cursor=page1["next_cursor"])),
        ("report", f"/api/v1/reports/{rid}"),
        ("dimensions", f"{a}/dimensions"),
        ("dimensions from=to=today", f"{a}/dimensions" + q(**{"from": today, "to": today})),
        ("dsyms/missing images=app", f"{a}/dsyms/missing" + q(images="app", limit=50)),
        ("dsyms/missing images=system", f"{a}/dsyms/missing" + q(images="system", limit=50)),
        ("dsyms", f"{a}/dsyms"),
        ("config", f"{a}/config"),
        ("whitelist", f"{a}/whitelist"),
    ]
    # A Matrix report has no samples, so no trace; startups, frames and
    # method mappings are Android's own pages (SPEC §13).
    routes += [
        ("startup", f"{a}/startup"),
        ("startup version=", f"{a}/startup" + q(version="8.4.0")),
        ("frames", f"{a}/frames"),
        ("frames version=", f"{a}/frames" + q(version="8.4.0")),
        ("method-mappings", f"{a}/method-mappings"),
    ] if ANDROID else [("report trace", f"/api/v1/reports/{rid}/trace")]
    # Search (SPEC §10.7): a piece of the top group's innermost function
    # (few groups), and its image (nearly every group: the heaviest case);
    # a user's reports, the top group's newest report's user.
    frame = first["groups"][0]["frames"][0]
    image, _, function = frame.partition("!")
    image = image.split("+0x")[0]
    piece = (function or image)[:8]
    if ANDROID:
        # Every Java name starts with the app's package: its method name
        # (onStep12346) is the piece that finds few groups.
        piece = function.split("(")[0].rsplit(".", 1)[-1]
    user = page1["reports"][0]["user_id"]
    routes += [
        ("groups q=function", g(q=piece)),
        ("groups q=image", g(q=image)),
        ("groups q=function version= 7 days",
         g(q=piece, version="8.4.0", **{"from": week, "to": today})),
        ("groups q=function sort=users", g(q=piece, sort="users")),
        ("user reports", f"{a}/reports" + q(user_id=user, limit=50)),
        ("user reports 7 days", f"{a}/reports" + q(user_id=user, limit=50,
                                                   **{"from": week, "to": today})),
    ]
    top = {"key1": key1, "key2": key2, "report": rid, "reports": first["groups"][0]["reports"]}
    return routes, top


def restart_cold(server):
    server.stop()
    subprocess.run(["scripts/pg.sh", "stop", PG_DIR], check=True, capture_output=True)
    subprocess.run(["scripts/pg.sh", "start", PG_DIR], check=True, capture_output=True)
    server.start()


def cold(server, routes):
    out = {}
    for name, path in routes:
        restart_cold(server)
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
        ms, status, _ = get(conn, path)
        conn.close()
        out[name] = {"ms": round(ms, 1), "status": status}
        print(f"  cold {name}: {ms:.1f} ms", file=sys.stderr)
    return out


def warm(routes, repeats):
    conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
    times = {name: [] for name, _ in routes}
    status = {}
    for name, path in routes:
        status[name] = get(conn, path)[1]
    for _ in range(repeats):
        for name, path in routes:
            ms, st, _ = get(conn, path)
            times[name].append(ms)
            if st != 200:
                status[name] = st
    out = {}
    for name, ts in times.items():
        ts.sort()
        out[name] = {"p50": round(statistics.median(ts), 1),
                     "p95": round(ts[max(0, -(-len(ts) * 95 // 100) - 1)], 1),
                     "max": round(ts[-1], 1), "status": status[name]}
    return out


def print_table(r):
    load, idle_, sz = r["load"], r["idle"], r["sizes"]
    print(f"\n{r['label']}: {load['accepted']} reports over {r['days']} day(s), seed {r['seed']},"
          f" loadavg {r['loadavg_before']} before, {r['loadavg_after']} after")
    if r.get("loaded_from"):
        print(f"(no load: {r['loaded_from']}'s rows, migrated; its ingest figures, by its build)")
    print(f"ingest           {load['reports_per_second']:9.1f} reports/s  (p50 {load['p50_ms']} ms,"
          f" p99 {load['p99_ms']} ms, errors {load['errors']}, concurrency {r['concurrency']})")
    ci = r.get("check_ins") or {}
    if ci:
        print(f"check-ins        {ci['per_second']:9.1f} /s  ({ci['check_ins']} in {ci['seconds']} s,"
              f" errors {ci['errors']})")
    print(f"idle {idle_['seconds']:.0f} s        postgres {idle_['postgres_cpu_pct']:.2f}% of one core,"
          f" server {idle_['server_cpu_pct']:.2f}%")
    print(f"bytes/report     {sz['bytes_per_report']:9.1f}  (database {sz['database_bytes'] / 2**20:.0f} MB)")
    for rel in sz["relations"]:
        print(f"  {rel['relation']:<24} {rel['bytes_per_report']:8.1f} B/report  heap"
              f" {rel['heap'] / 2**20:7.1f} MB  toast+maps {rel['toast_and_maps'] / 2**20:7.1f} MB"
              f"  indexes {rel['indexes'] / 2**20:7.1f} MB")
    print(f"\n{'route':<32} {'cold':>8} {'p50':>8} {'p95':>8} {'max':>8}  (ms; {r['repeats']} warm repeats)")
    for name, w in r["warm"].items():
        c = r["cold"][name]
        bad = "" if w["status"] == 200 and c["status"] == 200 else f"  status {c['status']}/{w['status']}"
        print(f"{name:<32} {c['ms']:8.1f} {w['p50']:8.1f} {w['p95']:8.1f} {w['max']:8.1f}{bad}")
    slow = max(r["warm"].items(), key=lambda kv: kv[1]["p95"])
    print(f"slowest warm p95: {slow[0]} {slow[1]['p95']} ms")


def main():
    reports = int(E["REPORTS_STORED"])
    result = {"label": E["LABEL"], "bin": E["BIN"], "days": int(E["DAYS"]),
              "seed": int(E["SEED"]), "concurrency": int(E["CONCURRENCY"]),
              "repeats": int(E["REPEATS"]), "today": E["TODAY"],
              "started_at": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z",
              "loadavg_before": open("/proc/loadavg").read().split()[0],
              "load": json.load(open(E["LOAD_JSON"])),
              "check_ins": json.load(open(E["CHECKINS_JSON"])),
              "loaded_from": E.get("LOADED_FROM")}
    print(f"idle for {E['IDLE_SECONDS']} s…", file=sys.stderr)
    result["idle"] = idle(float(E["IDLE_SECONDS"]), int(E["SERVER_PID"]))
    result["sizes"] = sizes(reports)
    os.kill(int(E["SERVER_PID"]), signal.SIGTERM)
    while alive(E["SERVER_PID"]):
        time.sleep(0.1)
    server = Server()
    try:
        server.start()
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
        routes, result["top_group"] = discover(conn, E["TODAY"])
        conn.close()
        print("cold: each route after a restart of PostgreSQL and the server…", file=sys.stderr)
        result["cold"] = cold(server, routes)
        print(f"warm: {E['REPEATS']} rounds over every route…", file=sys.stderr)
        result["warm"] = warm(routes, int(E["REPEATS"]))
    finally:
        server.stop()
    result["loadavg_after"] = open("/proc/loadavg").read().split()[0]
    json.dump(result, open(E["RESULT"], "w"), indent=1)
    print_table(result)
    print(f"\nwritten: {E['RESULT']}")


main()
