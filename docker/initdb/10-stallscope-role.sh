#!/bin/sh
# Run once by the postgres image when it initializes an empty volume (as
# its superuser, in the database POSTGRES_DB): the role the server logs in
# as. No superuser, no CREATEDB/CREATEROLE; it owns the schema `stallscope`
# and nothing else (the extensions hll, which only a superuser creates, and pg_trgm,
# goes to `public`, on its search_path), so the migrations it runs cannot reach another schema,
# and it cannot COPY … TO PROGRAM. The password comes from the environment
# through psql's \getenv, never a command line.
set -eu
: "${STALLSCOPE_DB_PASSWORD:?set it in docker/.env (see docker/.env.example)}"
psql -v ON_ERROR_STOP=1 -X -q --username "$POSTGRES_USER" \
	--dbname "$POSTGRES_DB" <<'SQL'
\getenv pw STALLSCOPE_DB_PASSWORD
\getenv db POSTGRES_DB
CREATE ROLE stallscope LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE
  NOREPLICATION NOBYPASSRLS PASSWORD :'pw';
ALTER ROLE stallscope SET search_path = stallscope, public;
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"db" TO stallscope;
CREATE SCHEMA stallscope AUTHORIZATION stallscope;
CREATE EXTENSION hll SCHEMA public;
CREATE EXTENSION pg_trgm SCHEMA public;
SQL
