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
