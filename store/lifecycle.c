/* lifecycle.c — see lifecycle.h. */
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/lifecycle.h"

#define TS(x) ST_TS(x)

/* One JSON text from Q of (APP_ID, KEY1): 1 with it, 0 when it is NULL. */
static int json_of(st_conn *c, const st_stmt *q, int64_t app_id, const char *key1, char **out_json)
{
	st_param p[] = {ST_INT64(app_id), ST_TEXT(key1)};
	return st_run_text(c, q, p, 2, out_json);
}

int st_group_status_set(st_conn *c, int64_t app_id, const char *key1,
			const st_status_change *change)
{
	static const st_stmt q = {"group_status_set",
				  "SELECT set_group_status($1, $2, $3, $4, $5::timestamptz,"
				  " $6::bigint)",
				  6};
	bool found = false;
	int rc = ST_EXEC(c, &q, st_read_bool, &found, ST_INT64(app_id), ST_TEXT(key1),
			 ST_TEXT(change->status), ST_TEXT(change->resolved_in),
			 ST_TEXT(change->until), ST_TEXT(change->until_reports));
	return rc < 0 ? rc : found;
}

/* Existence first: a group never given a status is open. */
#define GROUP_EXISTS                                                                               \
	"EXISTS (SELECT 1 FROM groups g WHERE g.app_id = $1 AND g.level = 1"                       \
	" AND g.key = $2)"

int st_group_status_json(st_conn *c, int64_t app_id, const char *key1, char **out_json)
{
	static const st_stmt q = {
		"group_status_json",
		"SELECT CASE WHEN " GROUP_EXISTS " THEN jsonb_strip_nulls(jsonb_build_object("
		"'key', $2::text, 'status', coalesce(s.status, 'open'), 'resolved_in', "
		"s.resolved_in,"
		" 'until', " TS(
			"s.until_at") ", 'until_reports', s.until_reports,"
				      " 'changed_at', " TS(
					      "s.changed_at") "))::text END"
							      " FROM (SELECT 1) one LEFT JOIN "
							      "group_status s ON s.app_id = $1 AND "
							      "s.key1 = $2",
		2};
	return json_of(c, &q, app_id, key1, out_json);
}

int st_group_events_json(st_conn *c, int64_t app_id, const char *key1, char **out_json)
{
	static const st_stmt q = {
		"group_events_json",
		"SELECT CASE WHEN " GROUP_EXISTS " THEN json_build_object('events',"
		" (SELECT coalesce(json_agg(jsonb_strip_nulls(jsonb_build_object('id', e.id,"
		" 'event_id', e.event_id, 'at', " TS(
			"e.at") ", 'type', e.type, 'status', e.status,"
				" 'cause', e.cause, 'version', e.version, 'day', e.day, 'reports', "
				"e.reports))"
				" ORDER BY e.id DESC), '[]')"
				" FROM (SELECT * FROM group_events WHERE app_id = $1 AND key1 = $2"
				" ORDER BY id DESC LIMIT 200) e))::text END",
		2};
	return json_of(c, &q, app_id, key1, out_json);
}

int st_lifecycle_reopen_expired(st_conn *c)
{
	static const st_stmt q = {"lifecycle_reopen", "SELECT reopen_expired_ignores()", 0};
	int64_t n = 0;
	int rc = st_exec(c, &q, NULL, 0, st_read_int64, &n);
	return rc < 0 ? rc : (int)n;
}

int st_lifecycle_report_moved(st_conn *c, int64_t app_id, int64_t report, const char *from_key1,
			      const char *to_key1, const char *frames1, const char *waits,
			      const char *version)
{
	static const st_stmt q = {
		"lifecycle_moved",
		"SELECT lifecycle_report_moved($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7)", 7};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_INT64(report), ST_TEXT(from_key1),
		       ST_TEXT(to_key1), ST_TEXT(frames1), ST_TEXT(waits), ST_TEXT(version));
}
