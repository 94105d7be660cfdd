/* activity.c — see activity.h and schema/019_active_users.sql. */
#include <stdlib.h>
#include <string.h>

#include "store/activity.h"
#include "store/internal.h"

/* The arrays sampling_check_ins takes after (app, policy version). */
enum { C_DAY, C_AT, C_VERSION, C_USER, C_SAMPLED, C_OS_VERSION, C_DEVICE, NCOLUMNS };

static const char *column_text(const st_checkin *r, size_t col)
{
	switch (col) {
	case C_DAY: return r->day;
	case C_AT: return r->at;
	case C_VERSION: return r->app_version;
	case C_USER: return r->user_id;
	case C_SAMPLED: return r->sampled ? "t" : "f";
	case C_OS_VERSION: return r->os_version;
	case C_DEVICE: return r->device;
	}
	return NULL;
}

typedef struct answers {
	st_checkin *const *rows;
	size_t n, got;
} answers;

static int read_answer(void *cls, const st_row *row)
{
	answers *a = cls;
	if (a->got == a->n)
		return -1;
	/* Column 0 is set_config's. */
	a->rows[a->got]->listed = st_row_bool(row, 1);
	a->rows[a->got++]->used = st_row_int64(row, 2);
	return 0;
}

int st_sampling_check_ins(st_conn *c, int64_t app_id, int64_t config_version,
			  st_checkin *const *rows, size_t n)
{
	/* Committed without waiting for the WAL flush: a check-in's only
	 * effect is a count, and a batch that waited for the disk held every
	 * caller a flush longer. What a database crash can lose is the last
	 * moments' check-ins, an undercount of active users; any later
	 * durable commit (ingest's) flushes them. */
	static const st_stmt q = {
		"sampling_check_ins",
		"SELECT set_config('synchronous_commit', 'off', true), s.listed, s.used"
		" FROM sampling_check_ins($1, $2, $3::text[]::date[], $4::text[]::timestamptz[],"
		" $5::text[], $6::text[], $7::text[]::boolean[], $8::text[], $9::text[]) AS s",
		2 + NCOLUMNS};
	if (n == 0 || n > INT32_MAX)
		return ST_HARD_ERROR;
	const char **items = calloc(n, sizeof *items);
	cm_buf arrays[NCOLUMNS];
	memset(arrays, 0, sizeof arrays);
	st_param params[2 + NCOLUMNS] = {ST_INT64(app_id), ST_INT64(config_version)};
	int rc = items ? 0 : ST_HARD_ERROR;
	for (size_t col = 0; rc == 0 && col < NCOLUMNS; col++) {
		for (size_t i = 0; i < n; i++)
			items[i] = column_text(rows[i], col);
		st_wire_text_array(&arrays[col], items, NULL, n);
		if (arrays[col].failed)
			rc = ST_HARD_ERROR;
		params[2 + col] = ST_BYTES(arrays[col].data, arrays[col].len);
	}
	answers a = {rows, n, 0};
	if (rc == 0)
		rc = st_exec(c, &q, params, 2 + NCOLUMNS, read_answer, &a);
	for (size_t col = 0; col < NCOLUMNS; col++)
		free(arrays[col].data);
	free(items);
	if (rc < 0)
		return rc;
	return a.got == n ? 1 : a.got == 0 ? 0 : ST_HARD_ERROR;
}

static int read_text(void *cls, const st_row *row)
{
	char **out = cls;
	const char *v = st_row_text(row, 0);
	if (!v || *out)
		return -1;
	*out = strdup(v);
	return *out ? 0 : -1;
}

int st_activity_stats(st_conn *c, int64_t app_id, const char *from, const char *to,
		      const char *version, char **out_json)
{
	static const st_stmt q = {
		"activity_stats",
		"SELECT json_build_object('days', coalesce(json_agg(json_build_object("
		" 'day', a.day, 'version', a.app_version, 'active_users', a.active_users,"
		" 'sampled_users', a.sampled_users, 'stalled_users', a.stalled_users,"
		" 'reports', a.reports, 'stall_ms', a.stall_ms,"
		" 'hang_free_users', CASE WHEN a.sampled_users > 0"
		"  THEN 1 - a.stalled_users::float8 / a.sampled_users END,"
		" 'adoption', CASE WHEN a.day_active > 0"
		"  THEN a.active_users::float8 / a.day_active END)"
		" ORDER BY a.day, a.app_version COLLATE \"C\"), '[]'))::text"
		/* A version's adoption is its share of the day's active users of
		 * every version, whatever the version filter. */
		" FROM (SELECT x.*, sum(x.active_users) OVER (PARTITION BY x.day) AS day_active"
		"  FROM activity_daily x WHERE x.app_id = $1"
		"  AND ($2::date IS NULL OR x.day >= $2::date)"
		"  AND ($3::date IS NULL OR x.day <= $3::date)) a"
		" WHERE $4::text IS NULL OR a.app_version = $4",
		4};
	*out_json = NULL;
	int rc = ST_EXEC(c, &q, read_text, out_json, ST_INT64(app_id), ST_TEXT(from), ST_TEXT(to),
			 ST_TEXT(version));
	if (rc < 0 || !*out_json) {
		free(*out_json);
		*out_json = NULL;
		return rc < 0 ? rc : ST_HARD_ERROR;
	}
	return 1;
}

int st_activity_purge(st_conn *c, int64_t app_id, const char *before_day)
{
	static const st_stmt q = {"activity_purge",
				  "DELETE FROM activity_users WHERE app_id = $1 AND day < $2::date",
				  2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
}
