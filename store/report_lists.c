/* report_lists.c — see report_lists.h. */
#include "store/internal.h"
#include "store/report_lists.h"

int st_user_reports_page(st_conn *c, int64_t app_id, const char *user_id, const char *from,
			 const char *to, int64_t after_us, int64_t after_id, int64_t limit,
			 char **out_json)
{
	/* Each retained day partition of the app answers through its
	 * reports_user_idx range, newest first, merged; planned at every call
	 * so the day range prunes the partitions and the keyset position is
	 * an index condition (as st_group_reports_page). The hash may be
	 * another user's too: the row's own user id is compared. */
	/* clang-format off */
	static const st_stmt q = {
		"user_reports_page",
		"SELECT " ST_REPORT_SUMMARIES("'key1', r.key1, 'key2', r.key2,")
		" FROM (SELECT * FROM reports r WHERE r.app_id = $1"
		" AND hashtext(r.user_id) = hashtext($2) AND r.user_id = $2"
		" AND ($4::bigint = 0 OR (r.received_at, r.id) <"
		" (to_timestamp($3::bigint / 1000000.0), $4::bigint))"
		" AND ($6::date IS NULL OR r.received_day >= $6::date)"
		" AND ($7::date IS NULL OR r.received_day <= $7::date)"
		" ORDER BY r.received_at DESC, r.id DESC LIMIT $5) AS r",
		7};
	/* clang-format on */
	st_param p[] = {ST_INT64(app_id), ST_TEXT(user_id), ST_INT64(after_us), ST_INT64(after_id),
			ST_INT64(limit),  ST_TEXT(from),    ST_TEXT(to)};
	int rc = st_plan_per_call(c);
	return rc < 0 ? rc : st_run_text(c, &q, p, 7, out_json);
}

static int read_found(void *cls, const st_row *row)
{
	(void)row;
	*(int *)cls = 1;
	return 0;
}

int st_group2_exists(st_conn *c, int64_t app_id, const char *key1, const char *key2)
{
	/* The row ingest makes with the report (its counts wait for the
	 * fold), so a group is found as soon as its first report is stored. */
	static const st_stmt q = {"group2_exists",
				  "SELECT 1 FROM groups WHERE app_id = $1 AND level = 2"
				  " AND key = $3 AND parent_key = $2",
				  3};
	int found = 0;
	int rc = ST_EXEC(c, &q, read_found, &found, ST_INT64(app_id), ST_TEXT(key1), ST_TEXT(key2));
	return rc < 0 ? rc : found;
}
