#!/usr/bin/env bash
# scripts/pg.sh — a private PostgreSQL cluster in one directory, for
# `make run` (var/pg) and the integration tests (a temp dir).
#
#   scripts/pg.sh init DIR            initdb DIR/data (once)
#   scripts/pg.sh start DIR [--fast]  start it; --fast trades durability for
#                                     speed (tests: fsync off); without it,
#                                     sized for the machine (durable_settings)
#   scripts/pg.sh stop DIR            stop it (fast shutdown)
#   scripts/pg.sh status DIR          exit 0 when running
#   scripts/pg.sh createdb DIR NAME   create database NAME unless it exists,
#                                     with the schema `stallscope` owned by
#                                     the role `stallscope`, and the
#                                     extension hll in `public`
#   scripts/pg.sh url DIR NAME        print the URL the server uses for NAME
#                                     (role `stallscope`, DIR/passfile)
#   scripts/pg.sh url DIR NAME --superuser
#                                     print the superuser's URL (unix socket;
#                                     works for root and the cluster owner)
#   scripts/pg.sh psql DIR NAME [ARG…] psql on NAME as the superuser
#
# PostgreSQL refuses to run as root: when called as root, the server runs as
# the `postgres` system user (created by Debian's postgresql package) and
# DIR is chown'ed to it. It listens on 127.0.0.1 only, on a free port picked
# at the first start and kept in DIR/port, with its unix socket in
# DIR/socket (mode 0700, so only the cluster's owner and root reach it).
#
# Who can connect (docs/SERVER.md, "The database and its roles"):
#   - the role `stallscope` — no superuser, no CREATEDB/CREATEROLE — owns
#     the schema `stallscope` of each database createdb made, and nothing
#     else; it logs in with scram-sha-256 on the socket or 127.0.0.1, its
#     password generated at the first start and kept in DIR/passfile
#     (mode 0600, a libpq password file, owned by the user who started it);
#   - the superuser (`postgres` as root, else the caller's name) logs in
#     with `peer` on the socket only, from the cluster's owner or root;
#   - nobody else, and nothing over TCP but the role `stallscope`.
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

# The role the server logs in as; it owns the schema of the same name,
# where its search_path points.
ROLE=stallscope

prepare_dir() {
	local dir=$1
	mkdir -p "$dir/socket" "$dir/log"
	chmod 700 "$dir" "$dir/socket"
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 ||
			die "running as root needs the 'postgres' user (apt-get install postgresql)"
		# Not DIR/passfile: it stays root's.
		chown postgres: "$dir"
		chown -R postgres: "$dir/socket" "$dir/log"
		[ ! -e "$dir/data" ] || chown -R postgres: "$dir/data"
		as_owner test -w "$dir" ||
			die "the postgres user cannot reach $dir: make its parent directories traversable (chmod o+x)"
	fi
}

# The role's password, generated once; DIR/passfile is a libpq password
# file, so the password never appears in a URL or a command line.
password() {
	local dir=$1
	if [ ! -s "$dir/passfile" ]; then
		local pw
		pw=$(head -c 30 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
		(umask 077 && echo "*:*:*:$ROLE:$pw" >"$dir/passfile.tmp")
		mv "$dir/passfile.tmp" "$dir/passfile"
	fi
	chmod 600 "$dir/passfile"
	cut -d: -f5- "$dir/passfile"
}

# Only the socket admits the superuser, by peer, from the cluster's owner
# or root; the server's role needs its password, and nothing else logs in.
write_hba() {
	local dir=$1 su
	su=$(owner)
	cat >"$dir/data/pg_hba.conf" <<EOF
# Written by scripts/pg.sh at each start; edits are lost.
# TYPE DATABASE USER ADDRESS METHOD
local all $su peer map=admin
local all $ROLE scram-sha-256
host all $ROLE 127.0.0.1/32 scram-sha-256
EOF
	cat >"$dir/data/pg_ident.conf" <<EOF
# Written by scripts/pg.sh at each start; edits are lost.
admin $su $su
admin root $su
EOF
}

# psql as the superuser, on the socket; SQL comes on standard input so that
# no secret shows in a command line.
su_psql() {
	local dir=$1 db=$2
	shift 2
	as_owner "$(pgbin)/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/socket" \
		-p "$(port_of "$dir")" -U "$(owner)" -d "$db" "$@"
}

ensure_role() {
	local dir=$1 pw
	pw=$(password "$dir")
	su_psql "$dir" postgres >/dev/null <<EOF
SELECT 'CREATE ROLE $ROLE' WHERE NOT EXISTS
  (SELECT FROM pg_roles WHERE rolname = '$ROLE') \gexec
ALTER ROLE $ROLE LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION
  NOBYPASSRLS PASSWORD '$pw';
ALTER ROLE $ROLE SET search_path = $ROLE, public;
EOF
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
	as_owner "$(pgbin)/initdb" -D "$dir/data" -U "$(owner)" \
		--auth-local=peer --auth-host=scram-sha-256 \
		-E UTF8 --locale=C.UTF-8 >"$dir/log/initdb.log" 2>&1 ||
		{ cat "$dir/log/initdb.log" >&2; die "initdb failed"; }
}

# The settings of a durable cluster (`make run`, the benchmarks), where
# PostgreSQL's own defaults fit a far smaller machine: shared buffers a
# quarter of the memory (128 MB to 4 GB), so the indexes ingest writes stay
# in them; checkpoints at most every 15 minutes or 4 GB of WAL, and the
# full pages written after each compressed (lz4), so fewer pages go to the
# WAL twice (docs/journal/performance.md, "Issue 25 through the ingest path").
durable_settings() {
	local kb mb
	kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
	mb=$((kb / 4096))
	[ "$mb" -ge 128 ] || mb=128
	[ "$mb" -le 4096 ] || mb=4096
	echo "-c shared_buffers=${mb}MB -c wal_compression=lz4 -c max_wal_size=4GB" \
		"-c checkpoint_timeout=15min -c autovacuum_naptime=10s"
}

cmd_start() {
	local dir=$1 fast=${2:-}
	[ -s "$dir/data/PG_VERSION" ] || cmd_init "$dir"
	prepare_dir "$dir"
	write_hba "$dir"
	if cmd_status "$dir"; then
		as_owner "$(pgbin)/pg_ctl" -D "$dir/data" reload >/dev/null
		ensure_role "$dir"
		ensure_hll "$dir"
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
	opts="$opts -c unix_socket_permissions=0700"
	if [ "$fast" = "--fast" ]; then
		opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	else
		opts="$opts $(durable_settings)"
	fi
	as_owner "$(pgbin)/pg_ctl" -D "$dir/data" -l "$dir/log/postgresql.log" \
		-o "$opts" -w -t 60 start >/dev/null ||
		{ tail -n 20 "$dir/log/postgresql.log" >&2; die "PostgreSQL did not start"; }
	ensure_role "$dir"
	ensure_hll "$dir"
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

# The database belongs to the superuser; the role gets CONNECT and its own
# schema, where the migrations create everything.
cmd_createdb() {
	local dir=$1 name=$2
	local exists
	exists=$(su_psql "$dir" postgres -At \
		-c "SELECT 1 FROM pg_database WHERE datname = '$name'")
	if [ "$exists" != 1 ]; then
		su_psql "$dir" postgres -c "CREATE DATABASE $name"
	elif [ -n "$(su_psql "$dir" "$name" -At \
		-c "SELECT to_regclass('public.schema_migrations')")" ]; then
		die "database $name was made by an older pg.sh (its tables belong to the superuser, in the schema public); start afresh: scripts/pg.sh stop $dir && rm -rf $dir (and var/demo-app.json var/demo-loaded for make run)"
	fi
	su_psql "$dir" "$name" >/dev/null <<EOF
SET client_min_messages = warning;
REVOKE ALL ON DATABASE $name FROM PUBLIC, $ROLE;
GRANT CONNECT ON DATABASE $name TO $ROLE;
CREATE SCHEMA IF NOT EXISTS $ROLE AUTHORIZATION $ROLE;
CREATE EXTENSION IF NOT EXISTS hll SCHEMA public;
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
EOF
}

# The HyperLogLog type of the group aggregates (schema/016) is not a
# trusted extension: only a superuser creates it, so we do, in every
# database createdb made — also those of a cluster made before it was
# needed (make run keeps var/pg). In `public`, where the role can create
# nothing (so it cannot plant objects the extension's script would meet),
# found through the role's search_path. pg_trgm (the group search's
# trigram index, schema/046) is trusted, but only for a role that may
# create in the database, which ours may not: it goes beside hll.
ensure_hll() {
	local dir=$1 db
	for db in $(su_psql "$dir" postgres -At -c \
		"SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate"); do
		su_psql "$dir" "$db" >/dev/null <<EOF
SET client_min_messages = warning;
SELECT 'CREATE EXTENSION IF NOT EXISTS hll SCHEMA public' WHERE EXISTS
  (SELECT FROM pg_namespace WHERE nspname = '$ROLE') \gexec
SELECT 'CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public' WHERE EXISTS
  (SELECT FROM pg_namespace WHERE nspname = '$ROLE') \gexec
EOF
	done
}

# Bytewise: a UTF-8 character becomes its bytes' escapes.
urlencode() {
	local LC_ALL=C
	local s=$1 i c out=
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case "$c" in
		[A-Za-z0-9/._~-]) out+=$c ;;
		*) out+=$(printf '%%%02X' "'$c") ;;
		esac
	done
	echo "$out"
}

cmd_url() {
	local dir=$1 name=$2 which=${3:-}
	case "$which" in
	"") echo "postgresql://$ROLE@127.0.0.1:$(port_of "$dir")/$name?passfile=$(urlencode "$dir/passfile")" ;;
	--superuser) echo "postgresql:///$name?host=$(urlencode "$dir/socket")&port=$(port_of "$dir")&user=$(owner)" ;;
	*) die "url DIR NAME [--superuser]" ;;
	esac
}

[ $# -ge 2 ] || { sed -n '2,36p' "$0" >&2; exit 2; }
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
	[ $# -eq 1 ] || [ $# -eq 2 ] || die "url DIR NAME [--superuser]"
	cmd_url "$dir" "$@" ;;
psql)
	[ $# -ge 1 ] || die "psql DIR NAME [ARG…]"
	su_psql "$dir" "$@" ;;
*) die "unknown command $verb" ;;
esac
