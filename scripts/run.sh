#!/usr/bin/env bash
# scripts/run.sh — what `make run` does on a fresh Debian 12 machine:
#   1. install missing packages (scripts/install-deps.sh);
#   2. unless STALLSCOPE_DATABASE_URL is set, start a private PostgreSQL
#      cluster under var/pg (scripts/pg.sh) and create the database; the
#      server connects as the role `stallscope` (no superuser), its
#      password in var/pg/passfile (mode 600), named by the URL;
#   3. apply migrations, as that role;
#   4. the first time, create the demo apps com.example.demo (iOS) and
#      com.example.android (Android, Matrix TraceCanary) and keep their
#      credentials in var/demo-app.json and var/demo-android.json (mode
#      600) so later runs show them again;
#   5. print the credentials and example requests, then serve on
#      STALLSCOPE_LISTEN (default 127.0.0.1:8080) until Ctrl-C, without
#      the access log (a line per request: the demo alone makes hundreds)
#      unless STALLSCOPE_ACCESS_LOG=1 is set;
#   6. the first time, once the server answers /healthz, load the demo data
#      sets into both apps (`stallscope demo`) and leave the marker
#      var/demo-loaded, so later runs skip it (the message says how to load
#      it again);
#   7. print the dashboard's address and the credentials again, last, so
#      they are on screen when the terminal goes quiet.
# The server runs in the background of this script, which forwards Ctrl-C
# and SIGTERM to it and waits: it still stops gracefully.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
bin=${STALLSCOPE_BIN:-build/stallscope}
[ -x "$bin" ] || make
mkdir -p var

if [ -z "${STALLSCOPE_DATABASE_URL:-}" ]; then
	pgdir=var/pg
	# PostgreSQL runs as `postgres` when we are root; if that user cannot
	# reach this checkout (say, under /root), keep the cluster where it
	# can and leave var/pg as a link to it.
	if [ "$(id -u)" -eq 0 ] && [ ! -e var/pg ] &&
		! runuser -u postgres -- test -x "$PWD/var"; then
		mkdir -p /var/lib/stallscope
		ln -s /var/lib/stallscope/pg var/pg
	fi
	scripts/pg.sh start "$pgdir"
	scripts/pg.sh createdb "$pgdir" stallscope
	STALLSCOPE_DATABASE_URL=$(scripts/pg.sh url "$pgdir" stallscope)
	export STALLSCOPE_DATABASE_URL
	echo "PostgreSQL: $STALLSCOPE_DATABASE_URL (stop it with: scripts/pg.sh stop var/pg)"
fi

"$bin" migrate

keys=var/demo-app.json
android_keys=var/demo-android.json
# create_app BUNDLE_ID NAME FILE: the app and its credentials in FILE.
create_app() {
	[ ! -s "$3" ] || return 0
	if (umask 077 && "$bin" app create "$1" --name "$2" >"$3.tmp"); then
		mv "$3.tmp" "$3"
	else
		rm -f "$3.tmp"
		echo "note: $1 exists but $3 is gone; create another app with" >&2
		echo "      $bin app create BUNDLE_ID" >&2
	fi
}
create_app com.example.demo Demo "$keys"
create_app com.example.android "Demo (Android)" "$android_keys"

export STALLSCOPE_LISTEN=${STALLSCOPE_LISTEN:-127.0.0.1:8080}
export STALLSCOPE_ACCESS_LOG=${STALLSCOPE_ACCESS_LOG:-0}
base="http://$STALLSCOPE_LISTEN"
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "${2:-$keys}"; }
credentials() {
	cat <<EOF
  ingest key    $(field ingest_key)
  upload token  $(field upload_token)
  admin token   $(field admin_token)
EOF
}
android_credentials() {
	[ -s "$android_keys" ] || return 0
	cat <<EOF
Android demo app com.example.android (credentials kept in $android_keys):
  ingest key    $(field ingest_key "$android_keys")
  upload token  $(field upload_token "$android_keys")
  admin token   $(field admin_token "$android_keys")

EOF
}
if [ -s "$keys" ]; then
	chmod 600 "$keys"
	[ ! -s "$android_keys" ] || chmod 600 "$android_keys"
	cat <<EOF

Demo app com.example.demo (credentials kept in $keys):
$(credentials)

$(android_credentials)
Dashboard: $base/ (sign in with com.example.demo and the admin token)

Try:
  curl $base/healthz
  curl -H "Authorization: Bearer $(field upload_token)" \\
       -T path/to/App.dSYM.zip -X POST $base/api/v1/apps/com.example.demo/dsyms
  curl -H "Authorization: Bearer $(field admin_token)" \\
       $base/api/v1/apps/com.example.demo/dsyms
  STALLSCOPE_URL=$base STALLSCOPE_APP=com.example.demo \\
  STALLSCOPE_UPLOAD_TOKEN=$(field upload_token) scripts/upload-dsyms.sh path/to/archive

EOF
fi
marker=var/demo-loaded
demo_cmd="STALLSCOPE_URL=$base $bin demo --keys $keys"

"$bin" serve &
server=$!
stop() { kill -TERM "$server" 2>/dev/null || true; }
trap stop INT TERM

healthy() {
	for _ in $(seq 600); do
		kill -0 "$server" 2>/dev/null || return 1
		curl -fsS -o /dev/null "$base/healthz" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

if [ -s "$keys" ] && healthy; then
	if [ ! -e "$marker" ]; then
		echo "Loading the demo data sets into com.example.demo and com.example.android (once; $marker marks it done)…"
		if STALLSCOPE_URL=$base "$bin" demo --keys "$keys"; then
			date -u +%FT%TZ >"$marker"
		else
			echo "note: the demo data did not load; the server keeps running" >&2
		fi
	fi
	if [ "$STALLSCOPE_ACCESS_LOG" = 1 ]; then
		access="The access log is on: a line per request."
	else
		access="The access log is off (STALLSCOPE_ACCESS_LOG=1 make run shows it)."
	fi
	cat <<EOF

The demo apps hold a week of stalls (com.example.android: Matrix's slow
methods, ANRs, lags, startups and frames). Load them again with (the same
UTC day it sends the same reports, which adds nothing; --seed N sends
another set):
  $demo_cmd
$access

$(android_credentials)
Dashboard: $base/ (sign in with com.example.demo and the admin token)
$(credentials)
Serving until Ctrl-C.
EOF
fi

# wait returns early when a signal arrives: wait again until it is gone.
while :; do
	wait "$server" && status=0 || status=$?
	kill -0 "$server" 2>/dev/null || break
done
trap - INT TERM
exit "$status"
