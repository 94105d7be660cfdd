/*
 * policy.c — per-app upload policy: configuration, whitelist and the daily
 * quota counters (SPEC §5). See reports.h for the contracts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/reports.h"

#define TS_FORMAT "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'"

static int read_config(void *cls, const st_row *row)
{
	st_app_config *cfg = cls;
	const char *rate = st_row_text(row, 0);
	cfg->sample_rate = rate ? strtod(rate, NULL) : 0;
	cfg->daily_quota = st_row_int64(row, 1);
	cfg->retention_days = st_row_int64(row, 2);
	const char *rules = st_row_text(row, 3);
	free(cfg->grouping_rules);
	cfg->grouping_rules = strdup(rules ? rules : "{}");
	cfg->version = st_row_int64(row, 4);
	return cfg->grouping_rules ? 0 : -1;
}

int st_config_get(st_conn *c, int64_t app_id, st_app_config *out)
{
	/* A plain read of the row first, which is all it takes once the app
	 * has one. */
	static const st_stmt read = {
		"config_read",
		"SELECT sample_rate::text, daily_quota, retention_days, grouping_rules::text,"
		" version FROM app_config WHERE app_id = $1",
		1};
	/* The defaults are the table's column defaults, so they are written
	 * down once: an app without a row gets one, made from them. */
	static const st_stmt make = {
		"config_make",
		"INSERT INTO app_config (app_id) VALUES ($1) ON CONFLICT DO NOTHING"
		" RETURNING sample_rate::text, daily_quota, retention_days, grouping_rules::text,"
		" version",
		1};
	memset(out, 0, sizeof *out);
	int rc = ST_EXEC(c, &read, read_config, out, ST_INT64(app_id));
	if (rc == 0)
		rc = ST_EXEC(c, &make, read_config, out, ST_INT64(app_id));
	/* Still no row: a concurrent first read inserted it between our read
	 * and our insert. The retry reads it. */
	if (rc == 0)
		rc = ST_SOFT_ERROR;
	if (rc < 0)
		st_app_config_clear(out);
	return rc;
}

void st_app_config_clear(st_app_config *cfg)
{
	free(cfg->grouping_rules);
	cfg->grouping_rules = NULL;
}

int st_config_update_apply(st_conn *c, int64_t app_id, const st_config_update *u)
{
	static const st_stmt ensure = {
		"config_update_ensure",
		"INSERT INTO app_config (app_id) VALUES ($1) ON CONFLICT DO NOTHING", 1};
	static const st_stmt q = {
		"config_update",
		"UPDATE app_config SET"
		" sample_rate = coalesce($2::double precision, sample_rate),"
		" daily_quota = coalesce($3::integer, daily_quota),"
		" retention_days = coalesce($4::integer, retention_days),"
		" grouping_rules = coalesce($5::jsonb, grouping_rules),"
		" version = version + 1, updated_at = now() WHERE app_id = $1",
		5};
	char rate[40];
	snprintf(rate, sizeof rate, "%.17g", u->sample_rate);
	st_param none = {ST_PARAM_NULL, NULL, 0, 0};
	int rc = ST_EXEC(c, &ensure, NULL, NULL, ST_INT64(app_id));
	if (rc < 0)
		return rc;
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id),
		       u->has_sample_rate ? ST_TEXT(rate) : none,
		       u->has_daily_quota ? ST_INT64(u->daily_quota) : none,
		       u->has_retention_days ? ST_INT64(u->retention_days) : none,
		       u->has_grouping_rules ? ST_TEXT(u->grouping_rules) : none);
}

/* An entry as read_entry takes it, in the API's time format. */
#define ENTRY_COLUMNS                                                                              \
	"user_id, note, to_char(expires_at AT TIME ZONE 'UTC', " TS_FORMAT "),"                    \
	" to_char(created_at AT TIME ZONE 'UTC', " TS_FORMAT ")"

struct wl_each {
	st_whitelist_cb cb;
	void *cls;
};

static int read_entry(void *cls, const st_row *row)
{
	struct wl_each *w = cls;
	st_whitelist_entry *e = calloc(1, sizeof *e);
	if (!e)
		return -1;
	int rc = -1;
	if (st_row_copy(row, 0, e->user_id, sizeof e->user_id) >= 0 &&
	    st_row_copy(row, 3, e->created_at, sizeof e->created_at) >= 0) {
		e->has_note = st_row_text(row, 1) != NULL;
		if (e->has_note)
			st_row_copy(row, 1, e->note, sizeof e->note);
		if (st_row_text(row, 2))
			st_row_copy(row, 2, e->expires_at, sizeof e->expires_at);
		rc = w->cb(w->cls, e);
	}
	free(e);
	return rc;
}

int st_whitelist_put(st_conn *c, int64_t app_id, const char *user_id, const char *note,
		     const char *expires_at, st_whitelist_cb cb, void *cls)
{
	/* A replaced entry keeps its created_at: the user has been listed
	 * since then. */
	static const st_stmt q = {
		"whitelist_put",
		"INSERT INTO whitelist (app_id, user_id, note, expires_at)"
		" VALUES ($1, $2, $3, $4::timestamptz)"
		" ON CONFLICT (app_id, user_id) DO UPDATE SET"
		" note = excluded.note, expires_at = excluded.expires_at"
		" RETURNING " ENTRY_COLUMNS,
		4};
	struct wl_each w = {cb, cls};
	return ST_EXEC(c, &q, read_entry, &w, ST_INT64(app_id), ST_TEXT(user_id),
		       ST_TEXT(note), ST_TEXT(expires_at));
}

int st_whitelist_delete(st_conn *c, int64_t app_id, const char *user_id)
{
	static const st_stmt q = {
		"whitelist_delete",
		"DELETE FROM whitelist WHERE app_id = $1 AND user_id = $2", 2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(user_id));
}

int st_whitelist_holds(st_conn *c, int64_t app_id, const char *user_id, const char *at)
{
	static const st_stmt q = {"whitelist_holds",
				  "SELECT 1 FROM whitelist WHERE app_id = $1 AND user_id = $2"
				  " AND (expires_at IS NULL OR expires_at > $3::timestamptz)",
				  3};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(user_id), ST_TEXT(at));
}

int st_whitelist_list(st_conn *c, int64_t app_id, const char *after, int64_t limit,
		      st_whitelist_cb cb, void *cls)
{
	static const st_stmt q = {
		"whitelist_list",
		"SELECT " ENTRY_COLUMNS " FROM whitelist WHERE app_id = $1 AND user_id > $2"
		" ORDER BY user_id LIMIT $3",
		3};
	struct wl_each w = {cb, cls};
	return ST_EXEC(c, &q, read_entry, &w, ST_INT64(app_id), ST_TEXT(after),
		       ST_INT64(limit));
}
