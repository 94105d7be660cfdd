#!/usr/bin/env bash
# Ingest variants: the work per report of several schemas (and builds),
# alternated run after run, since this machine's rate moves by a third
# between two runs of the same build (docs/journal/performance.md, "Ingest after
# issues 25 and 26").
#
#   bench/ingest-variants.sh ROUNDS DIR...
#
# Each DIR holds a schema/ (a copy of ours with the change to measure)
# and, optionally, a stallscope binary; without one, this tree's
# build/stallscope serves it. Every round runs `CPU=1 bench/ingest-work.sh`
# (a new cluster migrated from DIR/schema, CONCURRENCY 16, LOAD_SECONDS 12
# unless set) once per DIR, in the order given, and prints its line: the
# reports stored, the rate and the CPU per report of the server and of
# PostgreSQL. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=$1
shift
for _ in $(seq "$rounds"); do
	for dir in "$@"; do
		dir=$(realpath "$dir")
		bin=$(pwd)/build/stallscope
		[ -x "$dir/stallscope" ] && bin=$dir/stallscope
		printf '%s: ' "$(basename "$dir")"
		STALLSCOPE_BIN=$bin STALLSCOPE_SCHEMA_DIR=$dir/schema CPU=1 \
			CONCURRENCY=${CONCURRENCY:-16} LOAD_SECONDS=${LOAD_SECONDS:-12} \
			bash bench/ingest-work.sh 2>&1 | tail -n 1
	done
done
