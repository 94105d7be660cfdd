/*
 * schema_version.c — does the database's schema_migrations match the
 * migrations a build knows? `serve` asks at start (st_schema_check in
 * store.h), `migrate` before applying anything (st_schema_diff in
 * internal.h). Memory: the version list is freed before each function
 * returns.
 *
 * A build's statements and the SQL functions of its schema/functions were
 * written for exactly its migrations: against fewer, a statement may name
 * a column not there yet; against a version it has no file for (applied by
 * a newer stallscope), a function it calls may have changed shape, and its
 * `migrate` would put older function definitions back under the newer
 * servers. Hence the two answers: run stallscope migrate, or upgrade the
 * binary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/internal.h"

/* "{1,2,…}" of KNOWN[0..N): malloc'ed, NULL when out of memory. */
static char *int_array(const int *known, size_t n)
{
	size_t cap = 3 + n * 12;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t len = (size_t)snprintf(out, cap, "{");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%d", i ? "," : "", known[i]);
	snprintf(out + len, cap - len, "}");
	return out;
}

static int read_diff(void *cls, const st_row *row)
{
	st_schema_delta *d = cls;
	d->at = st_row_int64(row, 0);
	d->unknown = st_row_int64(row, 1);
	d->missing = st_row_int64(row, 2);
	return 0;
}

int st_schema_diff(st_conn *c, const int *known, size_t n, st_schema_delta *out)
{
	static const st_stmt q = {
		"schema_diff",
		"SELECT (SELECT max(version) FROM schema_migrations),"
		" (SELECT min(version) FROM schema_migrations WHERE version <> ALL ($1::int[])),"
		" (SELECT min(k) FROM unnest($1::int[]) k"
		"  WHERE NOT EXISTS (SELECT FROM schema_migrations WHERE version = k))",
		1};
	char *array = int_array(known, n);
	if (!array)
		return ST_HARD_ERROR;
	*out = (st_schema_delta){0, 0, 0};
	int rc = ST_EXEC(c, &q, read_diff, out, ST_TEXT(array));
	free(array);
	return rc < 0 ? rc : 0;
}

typedef struct schema_check {
	bool exists; /* schema_migrations is there */
	st_schema_delta diff;
} schema_check;

static int check_tx(st_conn *c, void *cls)
{
	static const st_stmt q_exists = {"schema_exists",
					 "SELECT to_regclass('schema_migrations') IS NOT NULL", 0};
	schema_check *s = cls;
	int rc = st_exec(c, &q_exists, NULL, 0, st_read_bool, &s->exists);
	if (rc < 0 || !s->exists)
		return rc < 0 ? rc : 0;
	return st_schema_diff(c, st_schema_versions, st_schema_nversions, &s->diff);
}

int st_schema_check(char *err, size_t errlen)
{
	schema_check s = {false, {0, 0, 0}};
	int rc = st_run_autocommit("schema_check", check_tx, &s);
	if (rc < 0)
		return rc;
	int known = st_schema_nversions ? st_schema_versions[st_schema_nversions - 1] : 0;
	if (!s.exists) {
		snprintf(err, errlen,
			 "the database holds no stallscope schema (no "
			 "schema_migrations), this stallscope knows up to %d: run "
			 "stallscope migrate",
			 known);
		return 0;
	}
	if (s.diff.unknown || s.diff.missing) {
		bool newer = s.diff.unknown != 0;
		snprintf(err, errlen,
			 "database schema is at %" PRId64 ", this stallscope knows up to %d: %s "
			 "(migration %03" PRId64 " %s)",
			 s.diff.at, known, newer ? "upgrade the binary" : "run stallscope migrate",
			 newer ? s.diff.unknown : s.diff.missing,
			 newer ? "is not one it knows" : "is not applied");
		return 0;
	}
	return 1;
}
