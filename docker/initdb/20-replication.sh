#!/bin/sh
# Run once by the postgres image when it initializes the primary's empty
# volume: the role the streaming replica (service db-replica, replica.sh)
# copies the cluster and streams WAL as. REPLICATION and nothing else: it
# cannot log in to a database, only to the replication protocol, and only
# with its password (scram-sha-256), from any address on the compose
# network. The password comes from the environment through psql's \getenv.
set -eu
: "${REPLICATION_PASSWORD:?set it in docker/.env (see docker/.env.example)}"
psql -v ON_ERROR_STOP=1 -X -q --username "$POSTGRES_USER" \
	--dbname "$POSTGRES_DB" <<'SQL'
\getenv pw REPLICATION_PASSWORD
CREATE ROLE replicator LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE
  NOBYPASSRLS PASSWORD :'pw';
SQL
# The image's pg_hba.conf lets any address into every database with a
# password, but the replication protocol needs its own line.
echo "host replication replicator all scram-sha-256" >>"$PGDATA/pg_hba.conf"
