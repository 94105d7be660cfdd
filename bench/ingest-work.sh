#!/usr/bin/env bash
# Ingest work per report: the server under callgrind, so two builds can be
# compared on a busy machine, where reports/s move with whatever else runs
# (docs/journal/performance.md, "Where the 11% went"). Instructions, cache misses
# and branches are counted only during a LOAD_SECONDS load after a warm-up,
# then divided by the reports stored meanwhile.
#
#   bench/ingest-work.sh                      this tree's build/stallscope
#   STALLSCOPE_BIN=/other/build/stallscope bench/ingest-work.sh
#   CPU=1 bench/ingest-work.sh                 no callgrind: CPU milliseconds
#                                              per report of the server and
#                                              of PostgreSQL, at CONCURRENCY
#
# CPU=1 is what compares changes inside the database: its CPU time per
# report moves far less with the machine's weather than its rate does.
#
# The database, fixtures and load generator are this tree's, so only the
# server binary differs between two runs. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

LOAD_SECONDS=${LOAD_SECONDS:-30}
CONCURRENCY=${CONCURRENCY:-4}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
bin=$(realpath "${STALLSCOPE_BIN:-build/stallscope}")
work=$(realpath -m "${BENCH_WORK:-build/bench/ingest-work}")

make -s all fixtures
mkdir -p build/bench
cc -O2 -Wall -o build/bench/ingest_load bench/ingest_load.c bench/load_net.c -lz -lpthread
rm -rf "$work"
mkdir -p "$work"
. bench/lib.sh
bench_cluster "$work/pg"
bench_app "$bin" com.bench.app "$work/app.json"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
callgrind=(valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes --instr-atstart=no
	--callgrind-out-file="$work/callgrind.out")
[ -n "${CPU:-}" ] && callgrind=()
STALLSCOPE_LISTEN=127.0.0.1:$port STALLSCOPE_DATA_DIR=$work/data \
	"${callgrind[@]}" "$bin" serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 300); do
	curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
	sleep 0.2
done
bench/upload-fixtures.py "$port" "$upload_token" "$work/profile" "$LLVM_BIN"
curl -sf -X PUT -H "Authorization: Bearer $admin_token" \
	-d '{"sample_rate":1,"daily_quota":1000000}' \
	"http://127.0.0.1:$port/api/v1/apps/com.bench.app/config" >/dev/null

load() { build/bench/ingest_load 127.0.0.1 "$port" "$ingest_key" "$work/profile" "$1" \
	"$CONCURRENCY"; }
stored() { "$PG_BIN/psql" "$url" -Atqc "SELECT count(*) FROM reports"; }
load 10 >/dev/null
# CPU seconds (user + system) of a process; of the postmaster and its children.
cpu_of() { awk '{print ($14 + $15) / '"$(getconf CLK_TCK)"'}' "/proc/$1/stat" 2>/dev/null || echo 0; }
db_cpu() {
	local postmaster total=0
	postmaster=$(head -n 1 "$work/pg/data/postmaster.pid")
	for pid in $postmaster $(ps -o pid= --ppid "$postmaster"); do
		total=$(echo "$total + $(cpu_of "$pid")" | bc)
	done
	echo "$total"
}
if [ -n "${CPU:-}" ]; then
	before=$(stored) server0=$(cpu_of "$server_pid") db0=$(db_cpu)
	load "$LOAD_SECONDS" >"$work/load.json"
	reports=$(($(stored) - before))
	server1=$(cpu_of "$server_pid") db1=$(db_cpu)
	python3 -c '
import json, sys
n, s0, s1, d0, d1 = int(sys.argv[1]), *map(float, sys.argv[2:6])
rate = json.load(open(sys.argv[6]))["reports_per_second"]
print(f"{n} reports stored ({rate:.0f}/s); CPU per report: server {1000 * (s1 - s0) / n:.3f} ms,"
      f" PostgreSQL {1000 * (d1 - d0) / n:.3f} ms")' "$reports" "$server0" "$server1" "$db0" "$db1" \
		"$work/load.json"
	exit 0
fi
before=$(stored)
callgrind_control -i on "$server_pid" >/dev/null
load "$LOAD_SECONDS" >"$work/load.json"
callgrind_control -i off "$server_pid" >/dev/null
reports=$(($(stored) - before))
callgrind_control -d "$server_pid" >/dev/null
sleep 1
callgrind_annotate "$(ls "$work"/callgrind.out.* | tail -n 1)" |
	python3 -c '
import re, sys
reports = int(sys.argv[1])
text = sys.stdin.read()
names = re.search(r"^Events shown:\s+(.*)$", text, re.M)[1].split()
totals = text.split("PROGRAM TOTALS")[0].splitlines()[-1]
counts = [int(x.replace(",", "")) for x in re.findall(r"[\d,]+", re.sub(r"\([^)]*\)", "", totals))]
print(f"{reports} reports stored under callgrind; per report:")
for name, count in zip(names, counts):
    print(f"  {name:5} {count / reports:14,.0f}")
' "$reports"
