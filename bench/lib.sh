# bench/lib.sh — sourced by bench/ingest.sh and bench/dashboard.sh, from the
# repository's root: a fresh durable PostgreSQL cluster, an app, a server.

# bench_cluster DIR: a new cluster in DIR (emptied first; fsync on) with the
# database `bench`, stopped at exit with the server (server_pid) if any.
# Sets url and exports STALLSCOPE_DATABASE_URL.
bench_cluster() {
	local dir=$1
	scripts/pg.sh stop "$dir" >/dev/null 2>&1 || true
	rm -rf "$dir"
	mkdir -p "$dir"
	chmod 755 "$(dirname "$dir")"
	scripts/pg.sh start "$dir" >/dev/null
	bench_pg_dir=$dir
	trap bench_cleanup EXIT
	scripts/pg.sh createdb "$dir" bench >/dev/null
	url=$(scripts/pg.sh url "$dir" bench)
	export STALLSCOPE_DATABASE_URL=$url
}

# bench_loaded_cluster FROM WORK: an earlier run's cluster, server data and
# run files (FROM/pg, FROM/data, FROM/run) copied into WORK and started,
# FROM left as it was. Sets url and exports STALLSCOPE_DATABASE_URL.
bench_loaded_cluster() {
	local from=$1 work=$2
	scripts/pg.sh stop "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work/pg" "$work/data" "$work/run"
	cp -a "$from/pg" "$from/data" "$from/run" "$work/"
	# A port of its own: the copy and FROM's own cluster may both run.
	rm -f "$work/pg/data/postmaster.pid" "$work/pg/port"
	scripts/pg.sh start "$work/pg" >/dev/null
	bench_pg_dir=$work/pg
	trap bench_cleanup EXIT
	url=$(scripts/pg.sh url "$work/pg" bench)
	export STALLSCOPE_DATABASE_URL=$url
}

bench_cleanup() {
	[ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	scripts/pg.sh stop "$bench_pg_dir" >/dev/null 2>&1 || true
}

# bench_app BIN APP JSON: migrates and creates APP with BIN (from ROOT, the
# build's tree, when set), its reply kept in JSON. Sets ingest_key,
# upload_token and admin_token.
bench_app() {
	local bin=$1 app=$2 json=$3
	(cd "${ROOT:-.}" && "$bin" migrate >/dev/null && "$bin" app create "$app") >"$json"
	ingest_key=$(sed -n 's/.*"ingest_key":"\([^"]*\)".*/\1/p' "$json")
	upload_token=$(sed -n 's/.*"upload_token":"\([^"]*\)".*/\1/p' "$json")
	admin_token=$(sed -n 's/.*"admin_token":"\([^"]*\)".*/\1/p' "$json")
}

# bench_serve BIN DATA_DIR LOG: BIN serve (from ROOT when set) on a free
# port, answering /healthz. Sets port and server_pid.
bench_serve() {
	local bin=$1 data=$2 log=$3
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	(cd "${ROOT:-.}" && STALLSCOPE_LISTEN=127.0.0.1:$port STALLSCOPE_DATA_DIR=$data \
		exec "$bin" serve) >"$log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break
		sleep 0.1
	done
}

# bench_build TOP: the build under test — BASE=<git rev> (cloned and built
# under TOP/build/bench/src-<rev>), STALLSCOPE_BIN=path, or TOP's own
# build/stallscope. Sets bin, label and root (the build's tree: its schema/
# and web/) and exports STALLSCOPE_SCHEMA_DIR.
bench_build() {
	local top=$1 rev src
	if [ -n "${BASE:-}" ]; then
		rev=$(git rev-parse --verify "$BASE^{commit}")
		src=$top/build/bench/src-${rev:0:12}
		if [ ! -x "$src/build/stallscope" ]; then
			rm -rf "$src"
			git clone -q --no-checkout "$top" "$src"
			git -C "$src" checkout -q "$rev"
			make -C "$src" -s all
		fi
		bin=$src/build/stallscope
		label=${LABEL:-$BASE-${rev:0:12}}
	elif [ -n "${STALLSCOPE_BIN:-}" ]; then
		bin=$(realpath "$STALLSCOPE_BIN")
		label=${LABEL:-$bin}
	else
		bin=$top/build/stallscope
		label=${LABEL:-$(git rev-parse --abbrev-ref HEAD)-$(git rev-parse --short=12 HEAD)$(
			git diff --quiet HEAD -- . ':!bench' ':!docs' || echo -dirty)}
	fi
	# The build's own schema and dashboard files, whichever tree it came from.
	root=$(dirname "$(dirname "$bin")")
	[ -d "$root/schema" ] || root=$top
	export STALLSCOPE_SCHEMA_DIR=$root/schema
}

# bench_method_mapping N FILE: a Matrix methodMapping.txt of N app methods
# (ids 1 … N, named as bench/matrix_gen.c's threadStack frames name them)
# and the dispatch entry, as Matrix's Gradle plugin writes it.
bench_method_mapping() {
	awk -v n="$1" 'BEGIN {
		for (i = 1; i <= n; i++)
			printf "%d,1,com.bench.feature%d.Screen%d onStep%d (Landroid.os.Bundle;I)V\n",
				i, i % 40, int(i / 8), i
		print "1048574,1,android.os.Handler dispatchMessage (Landroid.os.Message;)V"
	}' >"$2"
}

# bench_has_matrix: whether the server on $port has POST /api/v1/ingest/matrix
# (401 without a key; a build before issue 44 answers 404).
bench_has_matrix() {
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST \
		"http://127.0.0.1:$port/api/v1/ingest/matrix")" != 404 ]
}
