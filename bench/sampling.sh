#!/usr/bin/env bash
# Sampling route benchmark: GET /api/v1/sampling with app_version, which
# now counts the asking user as active (SPEC §10.2), against the same route
# of BASE's binary (default main), which only reads — same machine, same
# run, same PostgreSQL cluster (durable, fsync on), one database each.
#
#   1. BASE's tree (git archive) is built under BENCH_WORK/before.
#   2. Each binary migrates its own database and serves it; an app with
#      the default policy (5% sampled, 20 reports a day) and 10 whitelisted
#      users.
#   3. bench/sampling_load.c asks for USERS (200,000) distinct devices over
#      three versions at CONCURRENCY (16) kept-alive connections for
#      SECONDS_RUN (20): requests/s, p50/p99.
#   4. Before and after alternate for ROUNDS (3) after a warm-up of each;
#      medians and the after/before ratio are printed. Target (issue 26):
#      after >= 80% of before.
# Not part of `make test`: timings belong here, never in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_RUN=${SECONDS_RUN:-20}
CONCURRENCY=${CONCURRENCY:-16}
ROUNDS=${ROUNDS:-3}
USERS=${USERS:-200000}
BASE=${BASE:-main}
work=$(realpath -m "${BENCH_WORK:-build/bench/sampling}")

make -s all
scripts/pg.sh stop "$work/pg" >/dev/null 2>&1 || true
rm -rf "$work"
mkdir -p "$work/before"
chmod 755 "$work"
cc -O2 -Wall -o "$work/sampling_load" bench/sampling_load.c bench/load_net.c -lz -lpthread
git archive "$BASE" | tar -x -C "$work/before"
make -s -C "$work/before" all >/dev/null

scripts/pg.sh start "$work/pg" >/dev/null
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	scripts/pg.sh stop "$work/pg" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# start NAME BIN: migrates database NAME with BIN, serves it; sets
# port_NAME and key_NAME.
start() {
	local name=$1 bin=$2 url port app
	scripts/pg.sh createdb "$work/pg" "$name" >/dev/null
	url=$(scripts/pg.sh url "$work/pg" "$name")
	STALLSCOPE_DATABASE_URL=$url "$bin" migrate >/dev/null
	app=$(STALLSCOPE_DATABASE_URL=$url "$bin" app create com.bench.app)
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	STALLSCOPE_DATABASE_URL=$url STALLSCOPE_LISTEN=127.0.0.1:$port \
		STALLSCOPE_DATA_DIR=$work/data-$name "$bin" serve >"$work/server-$name.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
		sleep 0.1
	done
	local admin key
	admin=$(sed -n 's/.*"admin_token":"\([^"]*\)".*/\1/p' <<<"$app")
	key=$(sed -n 's/.*"ingest_key":"\([^"]*\)".*/\1/p' <<<"$app")
	for i in $(seq 0 9); do
		curl -sf -X PUT -H "Authorization: Bearer $admin" -d '{}' \
			"http://127.0.0.1:$port/api/v1/apps/com.bench.app/whitelist/device-$i" >/dev/null
	done
	printf -v "port_$name" '%s' "$port"
	printf -v "key_$name" '%s' "$key"
}
start before "$work/before/build/stallscope"
start after build/stallscope

load() { # NAME SECONDS
	local p="port_$1" k="key_$1"
	"$work/sampling_load" 127.0.0.1 "${!p}" "${!k}" "$2" "$CONCURRENCY" "$USERS"
}
echo "warming up…"
load before 3 >/dev/null
load after 3 >/dev/null
for r in $(seq "$ROUNDS"); do
	for name in before after; do
		out=$(load "$name" "$SECONDS_RUN")
		echo "round $r $name $out"
		echo "$name $out" >>"$work/results"
	done
done
python3 - "$work/results" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, js = line.split(" ", 1)
    runs.setdefault(name, []).append(json.loads(js))
med = {n: {k: statistics.median(r[k] for r in rs)
           for k in ("requests_per_second", "p50_ms", "p99_ms")} for n, rs in runs.items()}
errors = {n: sum(r["errors"] for r in rs) for n, rs in runs.items()}
for n in ("before", "after"):
    m = med[n]
    print(f"{n:6}: {m['requests_per_second']:8.0f} req/s  p50 {m['p50_ms']:.2f} ms"
          f"  p99 {m['p99_ms']:.2f} ms  errors {errors[n]}")
ratio = med["after"]["requests_per_second"] / med["before"]["requests_per_second"]
print(f"after/before: {ratio:.2f} (target >= 0.80)")
PY
