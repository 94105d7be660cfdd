/*
 * migrate.c — applies schema/NNN_name.sql files, then the function files
 * schema/functions/NAME.sql (see st_migrate in store.h). Memory: everything
 * allocated here is freed before st_migrate returns.
 *
 * The files hold plain DDL without BEGIN/COMMIT: each migration runs inside
 * a transaction of ours together with its schema_migrations row, so a file
 * is either fully applied and recorded or not at all. The SHA-256 of a
 * file's bytes is recorded to catch a shipped migration edited afterwards,
 * which would leave databases migrated before and after the edit different.
 *
 * Function files are the current definition of each function, edited in
 * place: they are applied at every run, all in one transaction after the
 * migrations, so a database always ends with exactly their definitions
 * whatever the historical migrations created on the way (docs/STORAGE.md
 * §Schema). Nothing is recorded for them: re-creating a function as it is
 * changes nothing, and the database's own definition is what is compared.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store/internal.h"

/* Serializes concurrent migrators (an arbitrary constant: "STALLSCO"). */
#define MIGRATE_LOCK_KEY INT64_C(0x5354414c4c53434f)
#define MAX_MIGRATION_BYTES (16u << 20)
#define MAX_MIGRATIONS 1000

#define FUNCTIONS_DIR "functions"
#define MAX_DIR 4096
/* NAMEDATALEN - 1: longer names would be truncated by PostgreSQL. */
#define MAX_FUNCTION_NAME 63

typedef struct migration {
	long version; /* 0 for every function file */
	char name[256];
} migration;

static const char bootstrap_sql[] =
	"CREATE TABLE IF NOT EXISTS schema_migrations ("
	" version integer PRIMARY KEY,"
	" name text NOT NULL,"
	" checksum text NOT NULL,"
	" applied_at timestamptz NOT NULL DEFAULT now());"
	"COMMENT ON TABLE schema_migrations IS "
	"'Migrations applied by stallscope migrate: one row per schema/ file,"
	" with the SHA-256 of its content to detect edits after the fact.';"
	"COMMENT ON INDEX schema_migrations_pkey IS "
	"'A version is applied at most once.';";

/* "NNN_name.sql" → version NNN; -1 for names that are not migrations. */
static long parse_name(const char *name)
{
	const char *p = name;
	long v = 0;
	while (*p >= '0' && *p <= '9') {
		if (v > 1000000)
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	if (p == name || *p != '_')
		return -1;
	size_t n = strlen(p);
	if (n < 5 || strcmp(p + n - 4, ".sql") != 0)
		return -1;
	for (const char *q = p + 1; q < p + n - 4; q++)
		if (!(*q == '_' || *q == '-' || (*q >= 'a' && *q <= 'z') ||
		      (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
			return -1;
	return v;
}

/*
 * "name.sql" → 0 when NAME is a function's name as PostgreSQL folds it
 * (lower case, unquoted); -1 for other files (not SQL); -2 for SQL files
 * that cannot name a function, refused rather than silently skipped.
 */
static long parse_function_name(const char *name)
{
	size_t n = strlen(name);
	if (n < 5 || strcmp(name + n - 4, ".sql") != 0 || name[0] == '.')
		return -1;
	if (n - 4 > MAX_FUNCTION_NAME || (name[0] >= '0' && name[0] <= '9'))
		return -2;
	for (const char *q = name; q < name + n - 4; q++)
		if (!(*q == '_' || (*q >= 'a' && *q <= 'z') ||
		      (*q >= '0' && *q <= '9')))
			return -2;
	return 0;
}

static int by_version(const void *a, const void *b)
{
	const migration *x = a, *y = b;
	if (x->version != y->version)
		return (x->version > y->version) - (x->version < y->version);
	return strcmp(x->name, y->name);
}

/* DIR's files PARSE accepts (>= 0 is their version; -2 refuses the file),
 * sorted by version then name. */
static int list_files(const char *dir, long (*parse)(const char *),
		      migration **out, size_t *out_n, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "cannot open schema directory %s: %s",
			 dir, strerror(errno));
		return -1;
	}
	migration *list = NULL;
	size_t n = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		long v = parse(e->d_name);
		if (v == -2) {
			snprintf(err, errlen, "%s/%s: a function file is named "
				 "after its function (a-z, 0-9, _; at most %d)",
				 dir, e->d_name, MAX_FUNCTION_NAME);
			rc = -1;
			break;
		}
		if (v < 0)
			continue;
		if (n == MAX_MIGRATIONS || strlen(e->d_name) >= 256) {
			snprintf(err, errlen, "too many or too long file "
				 "names in %s", dir);
			rc = -1;
			break;
		}
		migration *grown = realloc(list, (n + 1) * sizeof *list);
		if (!grown) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		list = grown;
		list[n].version = v;
		snprintf(list[n].name, sizeof list[n].name, "%s", e->d_name);
		n++;
	}
	closedir(d);
	if (rc < 0) {
		free(list);
		return rc;
	}
	if (n > 0)
		qsort(list, n, sizeof *list, by_version);
	*out = list;
	*out_n = n;
	return 0;
}

static int list_migrations(const char *dir, migration **out, size_t *out_n,
			   char *err, size_t errlen)
{
	migration *list = NULL;
	size_t n = 0;
	if (list_files(dir, parse_name, &list, &n, err, errlen) < 0)
		return -1;
	int rc = 0;
	for (size_t i = 1; i < n; i++) {
		if (list[i].version == list[i - 1].version) {
			snprintf(err, errlen, "%s and %s share version %ld",
				 list[i - 1].name, list[i].name,
				 list[i].version);
			rc = -1;
		}
	}
	if (rc == 0 && n == 0) {
		snprintf(err, errlen, "no NNN_name.sql migrations in %s", dir);
		rc = -1;
	}
	if (rc < 0) {
		free(list);
		return rc;
	}
	*out = list;
	*out_n = n;
	return 0;
}

static char *read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 strerror(errno));
		return NULL;
	}
	char *buf = malloc(MAX_MIGRATION_BYTES + 1);
	size_t n = buf ? fread(buf, 1, MAX_MIGRATION_BYTES + 1, f) : 0;
	bool bad = !buf || ferror(f) || n > MAX_MIGRATION_BYTES;
	fclose(f);
	if (bad) {
		snprintf(err, errlen, "cannot read %s (or larger than %u "
			 "bytes)", path, MAX_MIGRATION_BYTES);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (strlen(buf) != n) {
		snprintf(err, errlen, "%s holds a NUL byte", path);
		free(buf);
		return NULL;
	}
	return buf;
}

static void sha256_hex(const char *data, char out[2 * 32 + 1])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256(h, (const unsigned char *)data, strlen(data));
	sodium_bin2hex(out, 2 * 32 + 1, h, sizeof h);
}

static int lock(st_conn *c)
{
	static const st_stmt q = {"migrate_lock",
				  "SELECT pg_advisory_xact_lock($1)", 1};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(MIGRATE_LOCK_KEY));
}

/* Sums recorded for files whose comments were edited after they were
 * applied (on 2026-11-26, with the statements unchanged: compare the
 * files at the commits named). A database migrated before such an edit
 * recorded the older sum; it is accepted and replaced by the file's. No
 * other sum is ever accepted for a file. */
static const struct {
	long version;
	const char *sha256;
} superseded[] = {
	{27, "3eb1f9470f931c88c9015882b580c05c52cfa539c2e7b1af54d7694eadbbabb3"}, /* bce56bc */
	{28, "25e659f9709f64c0c3f75895d136ad57aabdd68498989c672e9e39b808c5c173"}, /* d3f9a67 */
	{29, "4a51484237b864b0cb58cc2cf84c6de1883bf290f1c918a98bdbb07e3ad2b691"}, /* 9a753e3 */
};

static bool is_superseded(long version, const char *sum)
{
	for (size_t i = 0; i < sizeof superseded / sizeof superseded[0]; i++)
		if (superseded[i].version == version && strcmp(superseded[i].sha256, sum) == 0)
			return true;
	return false;
}

static int read_checksum(void *cls, const st_row *row)
{
	return st_row_copy(row, 0, cls, 2 * 32 + 1) < 0 ? -1 : 0;
}

/* Applies one file unless recorded: 1 applied, 0 skipped, -1 error. */
static int apply_one(st_conn *c, const char *dir, const migration *m,
		     char *err, size_t errlen)
{
	static const st_stmt q_get = {
		"migrate_get",
		"SELECT checksum FROM schema_migrations WHERE version = $1", 1};
	static const st_stmt q_put = {
		"migrate_put",
		"INSERT INTO schema_migrations (version, name, checksum)"
		" VALUES ($1, $2, $3)",
		3};
	static const st_stmt q_resum = {
		"migrate_resum", "UPDATE schema_migrations SET checksum = $2 WHERE version = $1",
		2};
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, m->name);
	char *sql = read_file(path, err, errlen);
	if (!sql)
		return -1;
	char sum[2 * 32 + 1], recorded[2 * 32 + 1] = "";
	sha256_hex(sql, sum);

	int rc = st_conn_begin(c);
	if (rc >= 0)
		rc = lock(c);
	if (rc >= 0)
		rc = ST_EXEC(c, &q_get, read_checksum, recorded,
			     ST_INT64(m->version));
	int result;
	bool changed = rc == 1 && strcmp(recorded, sum) != 0, committed = false;
	if (rc < 0) {
		snprintf(err, errlen, "cannot read schema_migrations (see the "
			 "log above)");
		result = -1;
	} else if (changed && is_superseded(m->version, recorded)) {
		committed =
			ST_EXEC(c, &q_resum, NULL, NULL, ST_INT64(m->version), ST_TEXT(sum)) >= 0 &&
			st_conn_commit(c) >= 0;
		if (!committed)
			snprintf(err, errlen, "cannot record %s's sum (see the log above)",
				 m->name);
		result = committed ? 0 : -1;
	} else if (changed) {
		snprintf(err, errlen, "%s changed after it was applied "
			 "(recorded sha256 %s, file %s): add a new migration "
			 "instead of editing a shipped one", m->name, recorded,
			 sum);
		result = -1;
	} else if (rc == 1) {
		result = 0;
	} else if (st_exec_script(c, sql, m->name) < 0 ||
		   ST_EXEC(c, &q_put, NULL, NULL, ST_INT64(m->version), ST_TEXT(m->name),
			   ST_TEXT(sum)) < 0 ||
		   st_conn_commit(c) < 0) {
		snprintf(err, errlen, "%s failed (see the log above); nothing "
			 "of it was applied", m->name);
		result = -1;
	} else {
		result = 1;
	}
	if (result != 1 && !committed)
		st_conn_rollback(c);
	free(sql);
	return result;
}

/* The functions named like one function file, as the database holds them:
 * how many (overloads) and a digest of their definitions and comments. */
typedef struct fn_state {
	int64_t count;
	char digest[2 * 16 + 1];
} fn_state;

static int read_fn_state(void *cls, const st_row *row)
{
	fn_state *s = cls;
	s->count = st_row_int64(row, 0);
	return st_row_copy(row, 1, s->digest, sizeof s->digest) < 0 ? -1 : 0;
}

static int get_fn_state(st_conn *c, const char *fn, fn_state *out)
{
	static const st_stmt q = {
		"migrate_fn_state",
		"SELECT count(*), md5(coalesce(string_agg("
		"p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid)"
		" || ' ' || coalesce(obj_description(p.oid, 'pg_proc'), ''),"
		" ' ' ORDER BY p.oid::regprocedure::text), ''))"
		" FROM pg_proc p WHERE p.proname = $1 AND p.pronamespace ="
		" (SELECT oid FROM pg_namespace WHERE nspname = current_schema())",
		1};
	return ST_EXEC(c, &q, read_fn_state, out, ST_TEXT(fn)) == 1 ? 0 : -1;
}

/* Runs one function file in the open transaction: 1 when the database's
 * definition changed, 0 when it was the file's already, -1 on error. */
static int apply_function(st_conn *c, const char *dir, const migration *f,
			  char *err, size_t errlen)
{
	char path[MAX_DIR + 257], label[300], fn[MAX_FUNCTION_NAME + 1];
	snprintf(path, sizeof path, "%s/%s", dir, f->name);
	snprintf(label, sizeof label, FUNCTIONS_DIR "/%s", f->name);
	/* parse_function_name kept names of at most MAX_FUNCTION_NAME. */
	size_t len = strlen(f->name) - 4;
	memcpy(fn, f->name, len);
	fn[len] = '\0';
	char *sql = read_file(path, err, errlen);
	if (!sql)
		return -1;
	fn_state before, after;
	int result = -1;
	if (get_fn_state(c, fn, &before) < 0 ||
	    st_exec_script(c, sql, label) < 0 ||
	    get_fn_state(c, fn, &after) < 0)
		snprintf(err, errlen, "%s failed (see the log above); no "
			 "function file was applied", label);
	else if (after.count == 0)
		snprintf(err, errlen, "%s defines no function %s: a function "
			 "file is named after its function", label, fn);
	else
		result = before.count != after.count ||
			 strcmp(before.digest, after.digest) != 0;
	free(sql);
	return result;
}

/* Every function file, in name order, in one transaction; CHANGED[i] tells
 * whether file i changed the database. 0, or -1 with ERR. */
static int apply_functions(st_conn *c, const char *dir, const migration *list,
			   size_t n, bool *changed, char *err, size_t errlen)
{
	int rc = st_conn_begin(c);
	if (rc >= 0)
		rc = lock(c);
	if (rc < 0)
		snprintf(err, errlen, "cannot start applying the function "
			 "files (see the log above)");
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		int applied = apply_function(c, dir, &list[i], err, errlen);
		rc = applied < 0 ? -1 : 0;
		changed[i] = applied == 1;
	}
	if (rc >= 0 && st_conn_commit(c) < 0) {
		snprintf(err, errlen, "the function files could not be "
			 "committed (see the log above); none was applied");
		rc = -1;
	}
	if (rc < 0)
		st_conn_rollback(c);
	return rc;
}

/* 0 when every version the database recorded has a file in DIR's LIST;
 * -1 with ERR when one has none (applied by a newer stallscope, whose
 * servers would run on this one's older function definitions) or the
 * database cannot say. */
static int refuse_newer(st_conn *c, const char *dir, const migration *list, size_t n, char *err,
			size_t errlen)
{
	int *known = malloc(n * sizeof *known);
	if (!known) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		known[i] = (int)list[i].version;
	st_schema_delta d;
	int rc = st_schema_diff(c, known, n, &d);
	free(known);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read schema_migrations (see the log above)");
		return -1;
	}
	if (d.unknown) {
		snprintf(err, errlen,
			 "database schema is at %" PRId64 ", the migrations in %s "
			 "go up to %ld: upgrade the binary (migration %03" PRId64 " is not "
			 "among them); nothing was applied",
			 d.at, dir, list[n - 1].version, d.unknown);
		return -1;
	}
	return 0;
}

static int apply_migrations(st_conn *c, const char *dir,
			    const migration *list, size_t n, st_migrate_cb cb,
			    void *cls, char *err, size_t errlen)
{
	int rc = st_conn_begin(c);
	if (rc >= 0)
		rc = lock(c);
	if (rc >= 0)
		rc = st_exec_script(c, bootstrap_sql, "schema_migrations");
	if (rc >= 0)
		rc = st_conn_commit(c);
	if (rc < 0) {
		st_conn_rollback(c);
		snprintf(err, errlen, "cannot create schema_migrations (see "
			 "the log above)");
		return -1;
	}
	if (refuse_newer(c, dir, list, n, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int applied = apply_one(c, dir, &list[i], err, errlen);
		if (applied < 0)
			return -1;
		if (cb)
			cb(cls, list[i].name, applied == 1);
	}
	return 0;
}

int st_migrate(const char *conninfo, const char *schema_dir, st_migrate_cb cb,
	       void *cls, char *err, size_t errlen)
{
	char fdir[MAX_DIR];
	if (snprintf(fdir, sizeof fdir, "%s/" FUNCTIONS_DIR, schema_dir) >=
	    (int)sizeof fdir) {
		snprintf(err, errlen, "schema directory name too long");
		return -1;
	}
	migration *list, *fns = NULL;
	size_t n, nfns = 0;
	if (list_migrations(schema_dir, &list, &n, err, errlen) < 0)
		return -1;
	bool *changed = NULL;
	int rc = list_files(fdir, parse_function_name, &fns, &nfns, err,
			    errlen);
	if (rc == 0 && nfns > 0 && !(changed = calloc(nfns, sizeof *changed))) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	st_conn *c = NULL;
	if (rc == 0)
		rc = st_conn_open(conninfo, &c, err, errlen);
	if (rc == 0)
		rc = apply_migrations(c, schema_dir, list, n, cb, cls, err,
				      errlen);
	if (rc == 0)
		rc = apply_functions(c, fdir, fns, nfns, changed, err, errlen);
	for (size_t i = 0; rc == 0 && cb && i < nfns; i++) {
		char label[300];
		snprintf(label, sizeof label, FUNCTIONS_DIR "/%s", fns[i].name);
		cb(cls, label, changed[i]);
	}
	if (c)
		st_conn_close(c);
	free(changed);
	free(fns);
	free(list);
	return rc < 0 ? -1 : 0;
}
