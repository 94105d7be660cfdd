"""report.py — bench/load.sh's figures.

    report.py run N ACCESS_LOG OFFSET WRK_OUT RESULTS PID=WARM_KB:AFTER_KB…
        one run: per route class, from nginx's access log past OFFSET
        (bytes), its requests, p50/p99 of nginx's $request_time (ms, the
        time from the request's first byte to the reply's last, whichever
        instance served it), the statuses and the instances that served
        it; wrk's own totals (WRK_OUT's line); each server's RSS after
        the warm-up and after this run. Appends the run as a JSON line to
        RESULTS and prints it as a table.
    report.py summary RESULTS
        the runs side by side; exits 1 when a run had an unexpected 5xx or
        a server whose RSS after it exceeds 120% of its RSS after warm-up.
"""
import json
import re
import sys
from collections import Counter, defaultdict

LINE = re.compile(r'^\S+ \[[^\]]+\] "(\S+) (\S+)[^"]*" (\d{3}) \d+ ([\d.]+) '
                  r'upstream=(\S+) status=(\S+)')
ROUTES = [
    ("ingest", "native", re.compile(r"^/api/v1/ingest$")),
    ("ingest", "metrickit", re.compile(r"^/api/v1/ingest/metrickit$")),
    ("ingest", "kscrash", re.compile(r"^/api/v1/ingest/kscrash$")),
    ("ingest", "ips", re.compile(r"^/api/v1/ingest/ips$")),
    ("sampling", "check-in", re.compile(r"^/api/v1/sampling$")),
    ("dashboard", "groups list", re.compile(r"^/api/v1/apps/[^/]+/groups$")),
    ("dashboard", "a group", re.compile(r"^/api/v1/apps/[^/]+/groups/[^/]+$")),
    ("dashboard", "stats", re.compile(r"^/api/v1/apps/[^/]+/stats$")),
]
# A quota's 429 would be expected, but the load's policy has none (all
# users sampled, a quota out of reach): every 4xx is the script's bug.
EXPECTED = {"ingest": {202}, "sampling": {200}, "dashboard": {200}}
# nginx's "client closed the connection": the requests in flight when wrk
# stops. Counted, but neither unexpected nor in the percentiles (their
# time is wrk's stop, not the server's).
CUT = 499
RSS_LIMIT = 1.20


def route_of(path):
    path = path.split("?", 1)[0]
    for cls, name, pattern in ROUTES:
        if pattern.match(path):
            return cls, name
    return "other", path


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * len(values) + 0.5)) - 1))]


def read_log(path, offset):
    """{(class, route): {"ms": [...], "status": Counter, "upstream": Counter}}"""
    rows = defaultdict(lambda: {"ms": [], "status": Counter(), "upstream": Counter()})
    with open(path, "rb") as f:
        f.seek(offset)
        for raw in f:
            m = LINE.match(raw.decode(errors="replace"))
            if not m:
                continue
            row = rows[route_of(m[2])]
            status = int(m[3])
            if status != CUT:
                row["ms"].append(float(m[4]) * 1000)
            row["status"][status] += 1
            row["upstream"][m[5]] += 1
    return rows


def summarize(entries):
    ms = [v for e in entries for v in e["ms"]]
    status, upstream = Counter(), Counter()
    for e in entries:
        status.update(e["status"])
        upstream.update(e["upstream"])
    return {"requests": sum(status.values()), "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99),
            "status": {str(k): v for k, v in sorted(status.items())},
            "upstream": dict(sorted(upstream.items()))}


def run(argv):
    n, log, offset, wrk_out, results = argv[:5]
    rows = read_log(log, int(offset))
    wrk = next((json.loads(line[4:]) for line in open(wrk_out) if line.startswith("WRK ")), {})
    table = []
    for cls in ("ingest", "sampling", "dashboard", "other"):
        mine = sorted(k for k in rows if k[0] == cls)
        if not mine:
            continue
        table.append({"class": cls, "route": "(all)", **summarize([rows[k] for k in mine])})
        if len(mine) > 1 or cls == "other":
            table += [{"class": cls, "route": k[1], **summarize([rows[k]])} for k in mine]
    unexpected = {}
    for (cls, _), row in rows.items():
        for status, count in row["status"].items():
            if status != CUT and status not in EXPECTED.get(cls, ()):
                unexpected[str(status)] = unexpected.get(str(status), 0) + count
    rss = {}
    for arg in argv[5:]:
        pid, kb = arg.split("=")
        warm, after = map(int, kb.split(":"))
        rss[pid] = {"warm_kb": warm, "after_kb": after}
    result = {"run": int(n), "routes": table, "wrk": wrk, "unexpected": unexpected, "rss": rss}
    with open(results, "a") as f:
        f.write(json.dumps(result) + "\n")
    print_run(result)


def fmt_status(status):
    return " ".join(f"{k}:{v}" for k, v in status.items())


def print_run(r):
    print(f"\nrun {r['run']}: per route class (nginx's $request_time)")
    print(f"| {'class':9} | {'route':11} | {'requests':>8} | {'p50 ms':>7} | {'p99 ms':>7} "
          f"| statuses | served by |")
    print("|---|---|--:|--:|--:|---|---|")
    for t in r["routes"]:
        served = " ".join(f"{k.rsplit(':', 1)[-1]}:{v}" for k, v in t["upstream"].items())
        print(f"| {t['class']:9} | {t['route']:11} | {t['requests']:8} | {t['p50_ms']:7.1f} "
              f"| {t['p99_ms']:7.1f} | {fmt_status(t['status'])} | {served} |")
    w = r["wrk"]
    if w:
        secs = w["duration_us"] / 1e6
        print(f"wrk (client side, all routes): {w['requests']} requests in {secs:.1f} s "
              f"({w['requests'] / secs:.0f}/s), p50 {w['p50_ms']:.1f} ms, p99 {w['p99_ms']:.1f} ms, "
              f"max {w['max_ms']:.0f} ms; socket errors connect {w['connect']} read {w['read']} "
              f"write {w['write']} timeout {w['timeout']}; non-2xx/3xx {w['status']}")
    fives = sum(v for k, v in r["unexpected"].items() if k.startswith("5"))
    print(f"unexpected statuses: {fmt_status(r['unexpected']) or 'none'} (5xx: {fives}); "
          f"499: in flight when wrk stopped")
    for pid, m in r["rss"].items():
        print(f"server pid {pid}: RSS {m['warm_kb'] / 1024:.1f} MiB after warm-up, "
              f"{m['after_kb'] / 1024:.1f} MiB after run ({growth(m):+.1f}%)")


def growth(m):
    return (m["after_kb"] / m["warm_kb"] - 1) * 100


def summary(argv):
    runs = [json.loads(line) for line in open(argv[0])]
    print("\nsummary: requests, p50/p99 ms (nginx) per route class and run")
    print("| route | " + " | ".join(f"run {r['run']}" for r in runs) + " |")
    print("|---|" + "--:|" * len(runs))
    keys = []
    for r in runs:
        keys += [(t["class"], t["route"]) for t in r["routes"] if (t["class"], t["route"]) not in keys]
    for cls, route in keys:
        cells = []
        for r in runs:
            t = next((t for t in r["routes"] if (t["class"], t["route"]) == (cls, route)), None)
            cells.append(f"{t['requests']}, {t['p50_ms']:.1f}/{t['p99_ms']:.1f}" if t else "-")
        name = cls if route == "(all)" else f"{cls}: {route}"
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| wrk req/s (all) | " + " | ".join(
        f"{r['wrk']['requests'] / (r['wrk']['duration_us'] / 1e6):.0f}" if r["wrk"] else "-"
        for r in runs) + " |")
    print("| unexpected statuses | " + " | ".join(
        fmt_status(r["unexpected"]) or "none" for r in runs) + " |")
    pids = list(runs[0]["rss"])
    for pid in pids:
        print(f"| RSS MiB pid {pid} (warm-up → after) | " + " | ".join(
            f"{r['rss'][pid]['warm_kb'] / 1024:.1f} → {r['rss'][pid]['after_kb'] / 1024:.1f} "
            f"({growth(r['rss'][pid]):+.1f}%)" for r in runs) + " |")
    failed = []
    for r in runs:
        fives = {k: v for k, v in r["unexpected"].items() if k.startswith("5")}
        if fives:
            failed.append(f"run {r['run']}: unexpected 5xx {fmt_status(fives)}")
        for pid, m in r["rss"].items():
            if m["after_kb"] > RSS_LIMIT * m["warm_kb"]:
                failed.append(f"run {r['run']}: pid {pid} RSS {growth(m):+.1f}% over warm-up "
                              f"(limit +{(RSS_LIMIT - 1) * 100:.0f}%)")
    print("\n" + ("FAILED: " + "; ".join(failed) if failed else
                  "OK: no unexpected 5xx; every server's RSS within 20% of its RSS after warm-up"))
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "run":
        run(sys.argv[2:])
    else:
        sys.exit(summary(sys.argv[2:]))
