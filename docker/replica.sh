#!/bin/sh
# The streaming replica's entry point (service db-replica): on the first
# start of its empty volume, a copy of the primary made with pg_basebackup
# -R (which writes standby.signal and primary_conninfo, so the copy starts
# as a hot standby streaming from `db`); then PostgreSQL, read-only.
# Runs as the image's `postgres` user. The server reads from it through
# STALLSCOPE_READ_DATABASE_URL and falls back to the primary while it is
# down.
set -eu
: "${REPLICATION_PASSWORD:?set it in docker/.env (see docker/.env.example)}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	# The image leaves the volume's root world-writable; PostgreSQL
	# refuses a data directory others can read.
	chmod 0700 "$PGDATA"
	# A copy interrupted half-way leaves files behind: start it afresh.
	until PGPASSWORD=$REPLICATION_PASSWORD pg_basebackup --host=db \
		--username=replicator --pgdata="$PGDATA" --wal-method=stream \
		--write-recovery-conf --checkpoint=fast; do
		echo "replica.sh: pg_basebackup failed; again in 5 s" >&2
		find "$PGDATA" -mindepth 1 -delete
		sleep 5
	done
fi
exec postgres "$@"
