#!/usr/bin/env bash
# Ingest benchmark: the server against PostgreSQL's own insert rate, on one
# machine, in one run.
#
#   1. A private, durable PostgreSQL cluster (fsync on) under build/bench,
#      migrated; an app sampling everyone with a quota out of reach.
#   2. Up to 10 fixture dSYMs uploaded, so every image's symcache is warm.
#   3. bench/ingest_load.c posts gzip'ed native reports (30 frames, 10
#      images, 5% frames in no listed image) at CONCURRENCY (16) for
#      SECONDS_RUN (30): reports/s, p50/p99 latency.
#   4. The ceiling: pgbench running plain single-row INSERT transactions of
#      the same report row (raw and symbolized JSON as the server stored
#      them) into a table shaped like reports, same concurrency and time.
#   5. Android (issue 44; MATRIX=0 skips it, and a build without the route
#      has it skipped): a METHODS-line (20,000) methodMapping.txt uploaded
#      by scripts/upload-mapping.sh for each version the load sends, then
#      bench/ingest_load.c posts gzip'ed Matrix envelopes to
#      POST /api/v1/ingest/matrix: 20 elements each, every kind (slow
#      methods, ANRs, lags, a slow startup, a thread policy change, a
#      Trace_StartUp and a Trace_FPS; 2 as Issue.toString() lines), 30-line
#      stacks, same concurrency and time: reports/s and p99 per envelope.
#   6. Steps 3, 5 and 4 alternate for ROUNDS (3) after a short warm-up; the
#      medians, their ratio and the server's peak RSS are printed.
#      Targets: >= 50% of the ceiling, p99 < 100 ms.
# BENCH_WORK (default build/bench/ingest; emptied first) holds the cluster. On a
# tmpfs (BENCH_WORK=/dev/shm/stallscope-bench) a commit's flush costs next
# to nothing: the ceiling then measures CPU alone, the case hardest for the
# ratio, since batching saves us flushes that pgbench pays one per insert.
# The build under test: this tree's build/stallscope, STALLSCOPE_BIN=path or
# BASE=<git rev> (bench/lib.sh bench_build). Run it twice, BASE=<before>
# then without, for a before/after pair: each round's ratio to pgbench on
# the same cluster keeps the machine's weather out of the comparison.
# Not part of `make test`: timings belong here, never in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_RUN=${SECONDS_RUN:-30}
CONCURRENCY=${CONCURRENCY:-16}
ROUNDS=${ROUNDS:-3}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
top=$(pwd)
work=$(realpath -m "${BENCH_WORK:-build/bench/ingest}")

make -s all fixtures
mkdir -p build/bench
cc -O2 -Wall -o build/bench/ingest_load bench/ingest_load.c bench/load_net.c bench/matrix_gen.c \
	-lz -lpthread
METHODS=${METHODS:-20000}

rm -rf "$work"
mkdir -p "$work"
. bench/lib.sh
bench_build "$top"
export ROOT=$root
echo "build under test: $bin ($label)"
bench_cluster "$work/pg"
bench_app "$bin" com.bench.app "$work/app.json"
bench_serve "$bin" "$work/data" "$work/server.log"

# Upload the fixture dSYMs and write the load generator's image profile.
bench/upload-fixtures.py "$port" "$upload_token" "$work/profile" "$LLVM_BIN"
curl -sf -X PUT -H "Authorization: Bearer $admin_token" \
	-d '{"sample_rate":1,"daily_quota":1000000}' \
	"http://127.0.0.1:$port/api/v1/apps/com.bench.app/config" >/dev/null

matrix=()
if [ "${MATRIX:-1}" != 0 ] && bench_has_matrix; then
	matrix=(matrix "$METHODS")
	bench_method_mapping "$METHODS" "$work/methodMapping.txt"
	for v in 8.0.0 8.0.1 8.0.2; do
		STALLSCOPE_URL=http://127.0.0.1:$port STALLSCOPE_APP=com.bench.app \
			STALLSCOPE_UPLOAD_TOKEN=$upload_token scripts/upload-mapping.sh \
			--app-version "$v" --build bench "$work/methodMapping.txt" >/dev/null
	done
fi

echo "warming up…"
build/bench/ingest_load 127.0.0.1 "$port" "$ingest_key" "$work/profile" 3 "$CONCURRENCY" >/dev/null
[ ${#matrix[@]} -eq 0 ] || build/bench/ingest_load 127.0.0.1 "$port" "$ingest_key" \
	"$work/profile" 3 "$CONCURRENCY" "${matrix[@]}" >/dev/null

# The ceiling: the same row, inserted alone per transaction by pgbench.
psql() { "$PG_BIN/psql" "$url" -Atq "$@"; }
# Same columns, types, storage and indexes as the server's reports table.
psql -c "CREATE SEQUENCE bench_ids"
psql -c "CREATE TABLE bench_rows (LIKE reports INCLUDING ALL)"
psql -c "COPY (SELECT raw::text FROM reports LIMIT 1) TO STDOUT" >"$work/raw.json"
psql -c "COPY (SELECT symbolized::text FROM reports LIMIT 1) TO STDOUT" >"$work/sym.json"
# A BASE from before schema/023 has no in_sample column.
in_sample=$(psql -c "SELECT count(*) FROM information_schema.columns
  WHERE table_name = 'reports' AND column_name = 'in_sample'")
python3 - "$work" "$in_sample" <<'PY'
import sys
w, in_sample = sys.argv[1], sys.argv[2] == "1"
q = lambda s: "'" + s.replace("\\\\", "\\").replace("'", "''") + "'"
raw, sym = open(f"{w}/raw.json").read().strip(), open(f"{w}/sym.json").read().strip()
open(f"{w}/insert.sql", "w").write(
    "INSERT INTO bench_rows (id, app_id, received_day, received_at, report_id, user_id, kind,"
    " source, app_version, os_version, device, duration_ms, key1, key2, pending, raw,"
    " symbolized" + (", in_sample" if in_sample else "") + ") VALUES (nextval('bench_ids'), 1,"
    " current_date, now(), md5(random()::text), 'user-1', 'stall',"
    " 'native', '8.0.1', '17.2', 'iPhone14,2', 2500, 'k1', 'k2', false, "
    f"{q(raw)}, {q(sym)}" + (", true" if in_sample else "") + ");\n")
PY
pg_port=$(cat "$work/pg/port")

# Alternating rounds, so both sides see the same machine weather.
for round in $(seq "$ROUNDS"); do
	echo "round $round/$ROUNDS: stallscope ingest, $CONCURRENCY connections for ${SECONDS_RUN}s…"
	build/bench/ingest_load 127.0.0.1 "$port" "$ingest_key" "$work/profile" "$SECONDS_RUN" \
		"$CONCURRENCY" >"$work/load-$round.json"
	if [ ${#matrix[@]} -gt 0 ]; then
		echo "round $round/$ROUNDS: Matrix envelopes, $CONCURRENCY connections for ${SECONDS_RUN}s…"
		build/bench/ingest_load 127.0.0.1 "$port" "$ingest_key" "$work/profile" "$SECONDS_RUN" \
			"$CONCURRENCY" "${matrix[@]}" >"$work/matrix-$round.json"
	fi
	echo "round $round/$ROUNDS: pgbench, the same rows, one INSERT per transaction…"
	# As the server's role, over TCP like the server.
	PGPASSFILE=$work/pg/passfile "$PG_BIN/pgbench" -h 127.0.0.1 -p "$pg_port" -U stallscope \
		-n -c "$CONCURRENCY" -j 2 -T "$SECONDS_RUN" -f "$work/insert.sql" bench >"$work/pgbench-$round.txt" 2>&1
done
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$server_pid/status")

python3 - "$work" "$ROUNDS" "$rss_kb" "$CONCURRENCY" "$SECONDS_RUN" <<'EOF'
import json, re, statistics, sys
work, rounds, rss, conc, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:]
loads = [json.load(open(f"{work}/load-{i}.json")) for i in range(1, rounds + 1)]
tps = [float(re.search(r"^tps = ([0-9.]+)", open(f"{work}/pgbench-{i}.txt").read(), re.M)[1])
       for i in range(1, rounds + 1)]
print()
print(f"{conc} connections, {secs} s per round, {rounds} alternating rounds,"
      " gzip'ed reports of 30 frames over 10 images")
for i, (l, t) in enumerate(zip(loads, tps), 1):
    print(f"  round {i}: stallscope {l['reports_per_second']:7.1f} reports/s"
          f" (p50 {l['p50_ms']:.1f} ms, p99 {l['p99_ms']:.1f} ms, errors {l['errors']}),"
          f" pgbench {t:7.1f} tps, ratio {l['reports_per_second'] / t:.2f}")
    if l["built_live"]:
        print(f"    ({l['built_live']} bodies were built during the run: raise POOL_PER_SECOND)")
med = lambda key: statistics.median(l[key] for l in loads)
rate, ceiling = med("reports_per_second"), statistics.median(tps)
print(f"stallscope ingest  {rate:9.1f} reports/s (median)  p50 {med('p50_ms'):.1f} ms  "
      f"p99 {med('p99_ms'):.1f} ms  max {max(l['max_ms'] for l in loads):.1f} ms  "
      f"errors {sum(l['errors'] for l in loads)}  server peak RSS {rss / 1024:.1f} MB")
print(f"pgbench ceiling    {ceiling:9.1f} single-row INSERT transactions/s (median)")
print(f"ratio              {rate / ceiling:9.2f}  (target >= 0.50; p99 target < 100 ms)")
paired = statistics.median(l["reports_per_second"] / t for l, t in zip(loads, tps))
print(f"  (median of the rounds' own ratios, each pair run back to back: {paired:.2f})")
import os
if os.path.exists(f"{work}/matrix-1.json"):
    mx = [json.load(open(f"{work}/matrix-{i}.json")) for i in range(1, rounds + 1)]
    print("Matrix envelopes (20 elements: 18 reports of every kind, a Trace_StartUp, a Trace_FPS;"
          " 30-line stacks), same connections and time, between each native round and its pgbench:")
    for i, (m, l) in enumerate(zip(mx, loads), 1):
        print(f"  round {i}: matrix {m['reports_per_second']:7.1f} reports/s in"
              f" {m['requests'] / m['seconds']:6.1f} envelopes/s (p50 {m['p50_ms']:.1f} ms,"
              f" p99 {m['p99_ms']:.1f} ms per envelope, errors {m['errors']}),"
              f" native {l['reports_per_second']:7.1f} reports/s (p99 {l['p99_ms']:.1f} ms)")
    mmed = lambda key: statistics.median(m[key] for m in mx)
    print(f"matrix ingest      {mmed('reports_per_second'):9.1f} reports/s (median)  p50"
          f" {mmed('p50_ms'):.1f} ms  p99 {mmed('p99_ms'):.1f} ms per envelope  errors"
          f" {sum(m['errors'] for m in mx)}")
    print(f"matrix ÷ native    {mmed('reports_per_second') / rate:9.2f}  reports/s;"
          f" ÷ pgbench {mmed('reports_per_second') / ceiling:.2f}")
EOF
echo "(build under test: $bin, $label)"
