#!/usr/bin/env bash
# Mixed load through nginx (issue 43, item 6): the production topology on
# one machine, loaded by wrk for SECONDS_RUN (60) at CONNECTIONS (64),
# RUNS (3) times in a row after a warm-up.
#
#   1. A private, durable PostgreSQL cluster (scripts/pg.sh) under
#      BENCH_WORK (build/bench/load, emptied first), migrated; an app that
#      samples every user with a quota out of reach (so no 429 is expected).
#   2. Two `stallscope serve` on that database and one data dir, behind
#      Debian's nginx running the shipped docker/nginx.conf with its upstream
#      names mapped to loopback (bench/load/nginx.py: the tests' mapping).
#   3. The first fixture dSYM uploaded through nginx; bench/load/payloads.py
#      writes the bodies and sends each once (all must get 202).
#   4. wrk with bench/load/mixed.lua: 80% ingest (native, MetricKit,
#      KSCrash, .ips; plain and gzip; single reports and batches), 15%
#      sampling check-ins, 5% dashboard reads (groups list, a group,
#      stats). WARMUP (30) seconds first, then the runs.
#   5. Per run, bench/load/report.py: per route class, requests, p50/p99
#      (nginx's $request_time), statuses, which instance served them;
#      wrk's totals; each server's VmRSS after the warm-up and after the
#      run, each taken once nginx has closed its connections to the
#      servers (settle, below). Then the runs side by side.
# Exits 1 when a run saw an unexpected 5xx, a server's RSS after a run is
# more than 20% above its RSS after the warm-up, or `stallscope check`
# then finds counts that disagree. STALLSCOPE_BIN= or BASE=
# measures another build (bench/lib.sh). Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_RUN=${SECONDS_RUN:-60}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
RUNS=${RUNS:-3}
WARMUP=${WARMUP:-30}
# The tests' Python (nginx_util and ingest_util import pytest's conftest).
PYTHON=${PYTHON:-/usr/bin/python3}
work=$(realpath -m "${BENCH_WORK:-build/bench/load}")
export STALLSCOPE_FIXTURES=${STALLSCOPE_FIXTURES:-$PWD/build/fixtures}
export STALLSCOPE_FORMATS=${STALLSCOPE_FORMATS:-$(realpath -m ../shared/formats)}
export LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
for tool in wrk /usr/sbin/nginx curl; do
	command -v "$tool" >/dev/null ||
		{ echo "load.sh needs $tool: scripts/install-deps.sh --test"; exit 1; }
done

. bench/lib.sh
[ -n "${STALLSCOPE_BIN:-}${BASE:-}" ] || make -s all
bench_build "$PWD"
mkdir -p "$work"
bench_cluster "$work/pg"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	bench_cleanup
}
trap cleanup EXIT
rm -rf "$work/data" "$work/nginx" "$work/results" "$work"/wrk-* "$work"/server-*.log
mkdir -p "$work/data"

echo "# stallscope mixed load through nginx: $label"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -srm), nproc $(nproc)," \
	"$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
free -g | sed 's/^/# /'
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

bench_app "$bin" com.bench.load "$work/app.json"
export STALLSCOPE_TRUSTED_PROXIES=127.0.0.1/32
servers=()
for i in 1 2; do
	bench_serve "$bin" "$work/data" "$work/server-$i.log"
	pids+=("$server_pid")
	servers+=("$server_pid")
	printf -v "port_$i" '%s' "$port"
	echo "# instance $i: pid $server_pid, port $port"
done
server_pid=
front=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mapfile -d '' nginx_cmd < <("$PYTHON" bench/load/nginx.py "$work/nginx" "$front" "$port_1" "$port_2")
"${nginx_cmd[@]}" &
nginx_pid=$!
pids+=("$nginx_pid")
base=http://127.0.0.1:$front
for _ in $(seq 100); do
	curl -sf "$base/healthz" >/dev/null && break
	sleep 0.1
done

curl -sf -X PUT -H "Authorization: Bearer $admin_token" \
	-d '{"sample_rate":1,"daily_quota":1000000}' \
	"$base/api/v1/apps/com.bench.load/config" >/dev/null
dsym=$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1] + "/manifest.json"))
print(sys.argv[1] + "/" + next(f["path"] for f in m["files"] if f["kind"] == "dwarf"))' \
	"$STALLSCOPE_FIXTURES")
curl -sf -H "Authorization: Bearer $upload_token" --data-binary "@$dsym" \
	"$base/api/v1/apps/com.bench.load/dsyms" >/dev/null
INGEST_KEY=$ingest_key "$PYTHON" bench/load/payloads.py "$work/payloads.lua" "$base"

export LOAD_PAYLOADS=$work/payloads.lua LOAD_GROUPS=$work/groups APP=com.bench.load \
	INGEST_KEY=$ingest_key ADMIN_TOKEN=$admin_token
load() { # RUN SECONDS OUT
	LOAD_RUN=$1 wrk -t"$THREADS" -c"$CONNECTIONS" -d"$2"s --timeout 30s \
		-s bench/load/mixed.lua "$base" >"$3"
}
rss() { sed -n 's/^VmRSS:\s*\([0-9]*\) kB/\1/p' "/proc/$1/status"; }
threads() { sed -n 's/^Threads:\s*//p' "/proc/$1/status"; }
stored() { scripts/pg.sh psql "$work/pg" bench -Atc 'SELECT count(*) FROM stallscope.reports'; }
# The servers without connections, so that RSS is compared between like
# states: each connection from nginx has a thread (and its stack) in the
# server, and how many nginx keeps open after a run varies. A reload makes
# nginx's old workers close their idle upstream connections; then wait
# until the servers' thread counts stop falling.
settle() {
	local p before after
	kill -HUP "$nginx_pid"
	sleep 1
	for _ in $(seq 40); do
		before=$(for p in "${servers[@]}"; do threads "$p"; done)
		sleep 0.5
		after=$(for p in "${servers[@]}"; do threads "$p"; done)
		[ "$before" = "$after" ] && break
	done
}
# What the RSS is made of (heap and stacks, mapped files) and the threads
# (one per open connection from nginx), to read a growth by.
memory() {
	local p
	for p in "${servers[@]}"; do
		echo "# pid $p $1: $(grep -E '^(VmRSS|RssAnon|RssFile|Threads):' "/proc/$p/status" |
			tr -s ' \t\n' ' ')"
	done
}

: >"$work/groups"
echo "warming up ($WARMUP s)…"
load 0 "$WARMUP" "$work/wrk-warmup"
curl -sf -H "Authorization: Bearer $admin_token" "$base/api/v1/apps/com.bench.load/groups?limit=100" |
	python3 -c 'import json, sys; print("\n".join(g["key"] for g in json.load(sys.stdin)["groups"]))' \
		>"$work/groups"
settle
declare -A warm
for p in "${servers[@]}"; do warm[$p]=$(rss "$p"); done
memory "after warm-up"

for r in $(seq "$RUNS"); do
	offset=$(stat -c %s "$work/nginx/logs/access.log")
	before=$(stored)
	load "$r" "$SECONDS_RUN" "$work/wrk-$r"
	settle
	echo "# reports stored by run $r: $(($(stored) - before))"
	args=()
	for p in "${servers[@]}"; do args+=("$p=${warm[$p]}:$(rss "$p")"); done
	memory "after run $r"
	"$PYTHON" bench/load/report.py run "$r" "$work/nginx/logs/access.log" "$offset" \
		"$work/wrk-$r" "$work/results" "${args[@]}"
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
"$PYTHON" bench/load/report.py summary "$work/results" || status=1
# The counters the load left agree with its reports (SPEC §12).
if ! (cd "$root" && "$bin" check) >"$work/check.out" 2>&1; then
	status=1
	echo "FAILED: stallscope check"
fi
echo "stallscope check: $(tail -1 "$work/check.out")"
exit $status
