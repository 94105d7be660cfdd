#!/usr/bin/env bash
# scripts/pg.sh — a private PostgreSQL cluster in one directory, for
# `make run` (var/pg) and the integration tests (a temp dir).
#
#   scripts/pg.sh init DIR            initdb DIR/data (once)
#   scripts/pg.sh start DIR [--fast]  start it; --fast trades durability for
#                                     speed (tests: fsync off)
#   scripts/pg.sh stop DIR            stop it (fast shutdown)
#   scripts/pg.sh status DIR          exit 0 when running
#   scripts/pg.sh createdb DIR NAME   create database NAME unless it exists
#   scripts/pg.sh url DIR NAME        print the connection URL of NAME
#
# PostgreSQL refuses to run as root: when called as root, the server runs as
# the `postgres` system user (created by Debian's postgresql package) and
# DIR is chown'ed to it. It listens on 127.0.0.1 only, on a free port picked
# at the first start and kept in DIR/port, with its unix socket in
# DIR/socket; authentication is `trust`, for local connections only.
set -euo pipefail

die() { echo "pg.sh: $*" >&2; exit 1; }

pgbin() {
	if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
	local v
	for v in 15 16 17 14 13; do
		if [ -x "/usr/lib/postgresql/$v/bin/initdb" ]; then
			echo "/usr/lib/postgresql/$v/bin"; return
		fi
	done
	die "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (run scripts/install-deps.sh)"
}

# Runs a command as the cluster's owner.
as_owner() {
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	elif command -v runuser >/dev/null; then
		runuser -u postgres -- "$@"
	else
		setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
	fi
}

owner() {
	if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

prepare_dir() {
	local dir=$1
	mkdir -p "$dir/socket" "$dir/log"
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 ||
			die "running as root needs the 'postgres' user (apt-get install postgresql)"
		chown -R postgres: "$dir"
		as_owner test -w "$dir" ||
			die "the postgres user cannot reach $dir: make its parent directories traversable (chmod o+x)"
	fi
}

free_port() {
	# Below the kernel's ephemeral range, so no client socket of this
	# machine (tests open thousands) can hold the port when we restart.
	local low=32768 port tries
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	[ "$low" -gt 11000 ] || low=32768
	for tries in $(seq 50); do
		port=$((10000 + RANDOM % (low - 10000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"; return
		fi
	done
	die "no free port found"
}

port_of() {
	local dir=$1
	[ -s "$dir/port" ] || die "$dir has not been started yet"
	cat "$dir/port"
}

cmd_init() {
	local dir=$1
	prepare_dir "$dir"
	if [ -s "$dir/data/PG_VERSION" ]; then
		return 0
	fi
	as_owner "$(pgbin)/initdb" -D "$dir/data" -U "$(owner)" -A trust \
		-E UTF8 --locale=C.UTF-8 >"$dir/log/initdb.log" 2>&1 ||
		{ cat "$dir/log/initdb.log" >&2; die "initdb failed"; }
}

cmd_start() {
	local dir=$1 fast=${2:-}
	[ -s "$dir/data/PG_VERSION" ] || cmd_init "$dir"
	prepare_dir "$dir"
	if cmd_status "$dir"; then
		return 0
	fi
	local port
	if [ -s "$dir/port" ] &&
		! (exec 3<>"/dev/tcp/127.0.0.1/$(cat "$dir/port")") 2>/dev/null; then
		port=$(cat "$dir/port")
	else
		port=$(free_port)
		echo "$port" >"$dir/port"
	fi
	local opts="-p $port -k $dir/socket -c listen_addresses=127.0.0.1"
	if [ "$fast" = "--fast" ]; then
		opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	fi
	as_owner "$(pgbin)/pg_ctl" -D "$dir/data" -l "$dir/log/postgresql.log" \
		-o "$opts" -w -t 60 start >/dev/null ||
		{ tail -n 20 "$dir/log/postgresql.log" >&2; die "PostgreSQL did not start"; }
}

cmd_stop() {
	local dir=$1
	if cmd_status "$dir"; then
		as_owner "$(pgbin)/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
	fi
}

cmd_status() {
	local dir=$1
	[ -s "$dir/data/PG_VERSION" ] || return 3
	as_owner "$(pgbin)/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

cmd_createdb() {
	local dir=$1 name=$2 port
	port=$(port_of "$dir")
	local exists
	exists=$(as_owner "$(pgbin)/psql" -h "$dir/socket" -p "$port" -U "$(owner)" \
		-d postgres -Atc "SELECT 1 FROM pg_database WHERE datname = '$name'")
	if [ "$exists" != 1 ]; then
		as_owner "$(pgbin)/createdb" -h "$dir/socket" -p "$port" -U "$(owner)" "$name"
	fi
}

cmd_url() {
	local dir=$1 name=$2
	echo "postgresql://$(owner)@127.0.0.1:$(port_of "$dir")/$name"
}

[ $# -ge 2 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
verb=$1
dir=$2
# The real path: the postgres user may be unable to follow a link that
# lives in a directory only we can read.
dir=$(readlink -m "$dir")
shift 2
case "$verb" in
init) cmd_init "$dir" ;;
start) cmd_start "$dir" "$@" ;;
stop) cmd_stop "$dir" ;;
status) cmd_status "$dir" ;;
createdb)
	[ $# -eq 1 ] || die "createdb DIR NAME"
	[[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "bad database name: $1"
	cmd_createdb "$dir" "$1" ;;
url)
	[ $# -eq 1 ] || die "url DIR NAME"
	cmd_url "$dir" "$1" ;;
*) die "unknown command $verb" ;;
esac
