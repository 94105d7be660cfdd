/* leases.c — see leases.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/leases.h"

/* Two-key advisory locks (a space of their own: every other advisory lock
 * of ours takes one bigint), the first key saying whose: 'S' 'T' and the
 * job, so a DBA reading pg_locks can tell them apart. */
#define LEASE_CLASS(job) (0x53540000 + (int64_t)(job))
#define PRESENCE_CLASS	 LEASE_CLASS(0)
/* The second key is an int4: an app id past it shares a lease with a
 * smaller one, which costs only balance. */
#define KEY_OF(key) ((key) % 2147483647)

struct st_lease_session {
	st_conn *conn;
};

st_lease_session *st_lease_open(const char *conninfo, char *err, size_t errlen)
{
	static const st_stmt name = {"lease_name", "SET application_name = 'stallscope-leases'", 0};
	static const st_stmt presence = {"lease_presence",
					 "SELECT pg_advisory_lock($1::int, pg_backend_pid())", 1};
	st_lease_session *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (st_conn_open(conninfo, &s->conn, err, errlen) < 0) {
		free(s);
		return NULL;
	}
	if (st_exec(s->conn, &name, NULL, 0, NULL, NULL) < 0 ||
	    ST_EXEC(s->conn, &presence, NULL, NULL, ST_INT64(PRESENCE_CLASS)) < 0) {
		snprintf(err, errlen, "cannot take the presence lock");
		st_lease_close(s);
		return NULL;
	}
	return s;
}

int st_lease_try(st_lease_session *s, st_lease_job job, int64_t key)
{
	static const st_stmt q = {"lease_try", "SELECT pg_try_advisory_lock($1::int, $2::int)", 2};
	bool got = false;
	int rc = ST_EXEC(s->conn, &q, st_read_bool, &got, ST_INT64(LEASE_CLASS(job)),
			 ST_INT64(KEY_OF(key)));
	return rc < 0 ? rc : got;
}

int st_lease_release(st_lease_session *s, st_lease_job job, int64_t key)
{
	static const st_stmt q = {"lease_release", "SELECT pg_advisory_unlock($1::int, $2::int)",
				  2};
	int rc =
		ST_EXEC(s->conn, &q, NULL, NULL, ST_INT64(LEASE_CLASS(job)), ST_INT64(KEY_OF(key)));
	return rc < 0 ? rc : 0;
}

int st_lease_servers(st_lease_session *s, int64_t *out)
{
	static const st_stmt q = {
		"lease_servers",
		"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
		" AND objsubid = 2 AND classid = $1::bigint::oid"
		" AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
		1};
	*out = 0;
	int rc = ST_EXEC(s->conn, &q, st_read_int64, out, ST_INT64(PRESENCE_CLASS));
	return rc < 0 ? rc : 0;
}

typedef struct fold_work {
	int64_t *apps;
	size_t cap;
	int n;
	int64_t *n_apps;
} fold_work;

static int read_fold_work(void *cls, const st_row *row)
{
	fold_work *w = cls;
	*w->n_apps = st_row_int64(row, 0);
	const char *list = st_row_text(row, 1);
	/* "{1,2,3}" or "{}". */
	for (const char *p = list ? list + 1 : ""; *p && *p != '}' && (size_t)w->n < w->cap;) {
		char *end;
		long long id = strtoll(p, &end, 10);
		if (end == p)
			return -1;
		w->apps[w->n++] = id;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int st_lease_fold_work(st_lease_session *s, int64_t after, int64_t *apps, size_t cap,
		       int64_t *n_apps)
{
	/* One probe of group_deltas' primary key (app, report) per app: the
	 * few apps there are, not the deltas waiting (many after an outage;
	 * PostgreSQL 15 cannot skip through an index for DISTINCT). */
	static const st_stmt q = {
		"lease_fold_work",
		"SELECT (SELECT count(*) FROM apps),"
		" array(SELECT a.id FROM apps a"
		" WHERE EXISTS (SELECT 1 FROM group_deltas d WHERE d.app_id = a.id)"
		" ORDER BY a.id <= $2, a.id LIMIT $1)",
		2};
	fold_work w = {apps, cap, 0, n_apps};
	int rc = ST_EXEC(s->conn, &q, read_fold_work, &w, ST_INT64((int64_t)cap), ST_INT64(after));
	return rc < 0 ? rc : w.n;
}

void st_lease_close(st_lease_session *s)
{
	if (!s)
		return;
	st_conn_close(s->conn);
	free(s);
}
