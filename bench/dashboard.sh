#!/usr/bin/env bash
# Dashboard benchmark (issue 25): the data set of a team at scale, loaded
# through the ingest path, then every dashboard route timed cold and warm,
# the ingest rate, PostgreSQL's CPU while idle and the bytes per report.
#
#   1. A private, durable PostgreSQL cluster (fsync on) under BENCH_WORK
#      (build/bench/dashboard/pg, emptied first), migrated by the build under
#      test; an app sampling everyone with a quota out of reach; 10 fixture
#      dSYMs uploaded (bench/dashboard_profile.py picks the functions).
#   2. bench/dashboard_load.c posts REPORTS (1,000,000) gzip'ed native
#      reports at CONCURRENCY (16): 10,000 level-1 groups with a Zipf
#      frequency, 200,000 users, 5 versions, 4 OS versions, 6 devices,
#      3 kinds, a system image without symbols in every report, the same
#      reports for the same SEED on every build. DAYS=1 (default): all
#      through POST /api/v1/ingest, today; DAYS=N: spread over N days up to
#      today through the admin route POST …/backfill?received_at=.
#      Then bench/dashboard_checkins.py checks in the 200,000 users
#      (GET /api/v1/sampling with their version; the days before today
#      through the check-in backfill): the rates' denominators (issue 26).
#      CHECKINS=0 skips it (builds before issue 26 have no such route).
#   3. bench/dashboard_measure.py: IDLE_SECONDS (30) of CPU with no request,
#      the database's size, every dashboard route cold and then warm
#      (REPEATS rounds, 20): a table, and one JSON per run in
#      build/bench/dashboard/results/.
#
# PLATFORM=android (issue 44): the same for an Android app, com.bench.android:
# instead of dSYMs, a METHODS-line (20,000) methodMapping.txt uploaded by
# scripts/upload-mapping.sh for each of the 5 versions (build "1"); the
# REPORTS reports are Matrix TraceCanary envelopes of 20 (every kind, 30-line
# stacks, a Trace_StartUp and a Trace_FPS in every 10th envelope) through
# POST /api/v1/ingest/matrix (DAYS > 1: the backfill's format=matrix);
# check-ins with Android OS versions and devices; the same routes measured
# with Android's filter values, plus …/startup, …/frames and
# …/method-mappings (bench/dashboard_measure.py).
#
# LOADED=DIR skips step 2: DIR is an earlier run's BENCH_WORK (its pg/, data/
# and run/, left as they were: copied into BENCH_WORK, which must differ),
# migrated by the build under test (the migration's time is printed), then
# measured. The ingest figures are then that earlier load's, by its build:
# for a build whose schema changes only the reading side, a before/after
# of the routes on the very same rows in minutes instead of half an hour.
# Load with the older build: a build refuses rows another migrated past
# the migrations it knows (its migrate and serve say "upgrade the binary",
# docs/OPERATIONS.md "Upgrades"); builds before that check did not.
#
# The build under test: build/stallscope of this tree (made first), or
# STALLSCOPE_BIN=path (its repository's schema/ and web/ beside its
# build/), or BASE=<git rev> (cloned and built under build/bench/src-<rev>).
# Run it twice, BASE=main then without, for a before/after pair on the
# same data. Not part of `make test`: timings belong here, never in tests.
set -euo pipefail
cd "$(dirname "$0")/.."

REPORTS=${REPORTS:-1000000}
CONCURRENCY=${CONCURRENCY:-16}
DAYS=${DAYS:-1}
SEED=${SEED:-25}
REPEATS=${REPEATS:-20}
IDLE_SECONDS=${IDLE_SECONDS:-30}
PLATFORM=${PLATFORM:-ios}
METHODS=${METHODS:-20000}
export PLATFORM
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-14/bin}
top=$(pwd)
work=$(realpath -m "${BENCH_WORK:-build/bench/dashboard}")

make -s all fixtures
mkdir -p build/bench "$work/results"
cc -O2 -Wall -Wextra -o build/bench/dashboard_load bench/dashboard_load.c bench/load_net.c \
	bench/matrix_gen.c -lz -lpthread

. bench/lib.sh
bench_build "$top"
echo "build under test: $bin ($label)"

rm -rf "$work/data" "$work/run"
mkdir -p "$work/run"
export ROOT=$root
app=com.bench.dashboard
[ "$PLATFORM" != android ] || app=com.bench.android
if [ -n "${LOADED:-}" ]; then
	loaded=$(realpath "$LOADED")
	[ "$loaded" != "$work" ] || { echo "LOADED must differ from BENCH_WORK" >&2; exit 2; }
	bench_loaded_cluster "$loaded" "$work"
	load_day=$(date -u -r "$work/run/load.json" +%F)
	start=$(date +%s%N)
	(cd "$root" && "$bin" migrate >/dev/null)
	echo "migrated the loaded database in $((($(date +%s%N) - start) / 1000000)) ms"
	# Measured as a database in use would be, once autovacuum has been by
	# the rows the migration wrote: their dead tuples and the tables'
	# visibility maps, which would otherwise be mended during the rounds.
	start=$(date +%s%N)
	scripts/pg.sh psql "$work/pg" bench -qc "VACUUM (ANALYZE)"
	echo "vacuumed in $((($(date +%s%N) - start) / 1000000)) ms"
	admin_token=$(sed -n 's/.*"admin_token":"\([^"]*\)".*/\1/p' "$work/run/app.json")
	bench_serve "$bin" "$work/data" "$work/server.log"
	stored=$(sed -n 's/.*"accepted":\([0-9]*\).*/\1/p' "$work/run/load.json")
	label="$label on $LOADED's rows"
	BIN=$bin WORK=$work PORT=$port APP=$app ADMIN_TOKEN=$admin_token \
		SERVER_PID=$server_pid DATABASE_URL=$url REPORTS_STORED=$stored \
		LOAD_JSON=$work/run/load.json CHECKINS_JSON=$work/run/checkins.json LABEL=$label \
		REPEATS=$REPEATS IDLE_SECONDS=$IDLE_SECONDS DAYS=$DAYS SEED=$SEED \
		CONCURRENCY=$CONCURRENCY TODAY=$load_day LOADED_FROM=$loaded \
		RESULT=$work/results/$(date -u +%Y%m%dT%H%M%SZ)-$(echo "$label" | tr -c 'A-Za-z0-9._\n-' _).json \
		python3 bench/dashboard_measure.py
	exit 0
fi
bench_cluster "$work/pg"
bench_app "$bin" "$app" "$work/run/app.json"
bench_serve "$bin" "$work/data" "$work/server.log"

retention=""
[ "$DAYS" -le 7 ] || retention=",\"retention_days\":$((DAYS + 1))"
curl -sf -X PUT -H "Authorization: Bearer $admin_token" \
	-d "{\"sample_rate\":1,\"daily_quota\":1000000$retention}" \
	"http://127.0.0.1:$port/api/v1/apps/$app/config" >/dev/null
matrix=()
if [ "$PLATFORM" = android ]; then
	bench_has_matrix || { echo "this build has no POST /api/v1/ingest/matrix" >&2; exit 2; }
	matrix=(matrix "$METHODS")
	bench_method_mapping "$METHODS" "$work/run/methodMapping.txt"
	for v in 8.0.0 8.1.0 8.2.0 8.3.0 8.4.0; do
		STALLSCOPE_URL=http://127.0.0.1:$port STALLSCOPE_APP=$app \
			STALLSCOPE_UPLOAD_TOKEN=$upload_token scripts/upload-mapping.sh \
			--app-version "$v" --build 1 "$work/run/methodMapping.txt" >/dev/null
	done
	: >"$work/run/profile"
else
	python3 bench/dashboard_profile.py "$bin" "$port" "$app" "$upload_token" \
		"$work/run/profile" "$LLVM_BIN"
fi

today=$(date -u +%F)
auth=$ingest_key
[ "$DAYS" -le 1 ] || auth=$admin_token
echo "loading $REPORTS reports over $DAYS day(s), $CONCURRENCY connections…"
build/bench/dashboard_load 127.0.0.1 "$port" "$auth" "$app" "$work/run/profile" "$REPORTS" \
	"$CONCURRENCY" "$DAYS" "$SEED" "${matrix[@]}" >"$work/run/load.json"
stored=$(sed -n 's/.*"accepted":\([0-9]*\).*/\1/p' "$work/run/load.json")
echo '{}' >"$work/run/checkins.json"
if [ "${CHECKINS:-1}" != 0 ]; then
	echo "checking in 200000 users over $DAYS day(s)…"
	python3 bench/dashboard_checkins.py "$port" "$app" "$ingest_key" "$admin_token" 200000 \
		"$DAYS" 8 >"$work/run/checkins.json"
fi

BIN=$bin WORK=$work PORT=$port APP=$app ADMIN_TOKEN=$admin_token \
	SERVER_PID=$server_pid DATABASE_URL=$url REPORTS_STORED=$stored \
	LOAD_JSON=$work/run/load.json CHECKINS_JSON=$work/run/checkins.json LABEL=$label REPEATS=$REPEATS IDLE_SECONDS=$IDLE_SECONDS \
	DAYS=$DAYS SEED=$SEED CONCURRENCY=$CONCURRENCY TODAY=$today \
	RESULT=$work/results/$(date -u +%Y%m%dT%H%M%SZ)-$(echo "$label" | tr -c 'A-Za-z0-9._\n-' _).json \
	python3 bench/dashboard_measure.py
