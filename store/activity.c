/* activity.c — see activity.h and schema/019_active_users.sql. */
#include <stdlib.h>
#include <string.h>

#include "store/activity.h"
#include "store/internal.h"

/* The arrays count_activity takes after the app, in order. */
enum { C_DAY, C_VERSION, C_USER, C_SAMPLED, C_LISTED, C_STORED, C_DURATION, NCOLUMNS };

static const char *column_text(const st_checkin *r, size_t col)
{
	switch (col) {
	case C_DAY: return r->day;
	case C_VERSION: return r->app_version;
	case C_USER: return r->user_id;
	case C_SAMPLED: return r->sampled ? "t" : "f";
	case C_LISTED: return r->listed ? "t" : "f";
	case C_STORED: return "f";
	}
	return NULL; /* a check-in has no duration */
}

int st_activity_count(st_conn *c, int64_t app_id, const st_checkin *const *rows, size_t n)
{
	static const st_stmt q = {
		"activity_count",
		"SELECT count_activity($1, $2::text[]::date[], $3::text[], $4::text[],"
		" $5::text[]::boolean[], $6::text[]::boolean[], $7::text[]::boolean[],"
		" $8::text[]::bigint[])",
		1 + NCOLUMNS};
	if (n == 0 || n > INT32_MAX)
		return ST_HARD_ERROR;
	const char **items = calloc(n, sizeof *items);
	cm_buf arrays[NCOLUMNS];
	memset(arrays, 0, sizeof arrays);
	st_param params[1 + NCOLUMNS] = {ST_INT64(app_id)};
	int rc = items ? 0 : ST_HARD_ERROR;
	for (size_t col = 0; rc == 0 && col < NCOLUMNS; col++) {
		for (size_t i = 0; i < n; i++)
			items[i] = column_text(rows[i], col);
		st_wire_text_array(&arrays[col], items, n);
		if (arrays[col].failed)
			rc = ST_HARD_ERROR;
		params[1 + col] = ST_BYTES(arrays[col].data, arrays[col].len);
	}
	if (rc == 0)
		rc = st_exec(c, &q, params, 1 + NCOLUMNS, NULL, NULL);
	for (size_t col = 0; col < NCOLUMNS; col++)
		free(arrays[col].data);
	free(items);
	return rc < 0 ? rc : 0;
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
		" 'reports', a.reports, 'stall_ms', a.stall_ms)"
		" ORDER BY a.day, a.app_version COLLATE \"C\"), '[]'))::text"
		" FROM activity_daily a WHERE a.app_id = $1"
		" AND ($2::date IS NULL OR a.day >= $2::date)"
		" AND ($3::date IS NULL OR a.day <= $3::date)"
		" AND ($4::text IS NULL OR a.app_version = $4)",
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
