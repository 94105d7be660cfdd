/* triage.c — see triage.h. */
#include "store/internal.h"
#include "store/triage.h"

#define DAYS "($3::date IS NULL OR day >= $3::date) AND ($4::date IS NULL OR day <= $4::date)"

struct compare_each {
	st_compare_cb cb;
	void *cls;
};

static int read_compare(void *cls, const st_row *row)
{
	struct compare_each *e = cls;
	st_compare_row r = {
		.key = st_row_text(row, 0),
		.frames = st_row_text(row, 1),
		.base_reports = st_row_int64(row, 2),
		.base_affected = st_row_int64(row, 3),
		.target_affected = st_row_int64(row, 4),
		.culprit = st_row_text(row, 5),
		.target_reports = st_row_int64(row, 6),
		.base_stall_ms = st_row_int64(row, 7),
		.target_stall_ms = st_row_int64(row, 8),
	};
	return e->cb(e->cls, &r);
}

static int read_sampled(void *cls, const st_row *row)
{
	int64_t **out = cls;
	*out[0] = st_row_int64(row, 0);
	*out[1] = st_row_int64(row, 1);
	return 0;
}

int st_compare(st_conn *c, int64_t app_id, const char *base, const char *target, const char *from,
	       const char *to, st_compare_cb cb, void *cls, int64_t *base_sampled,
	       int64_t *target_sampled)
{
	/* The two versions' level-1 rows by group_facet_days_value_idx: per
	 * group, version and day one row, its in-sample users counted
	 * (schema/025), summed over the days: distinct user-days without a
	 * sketch read. In no order: the caller sorts by its own score, and a
	 * sort of every group's key by collation cost a fifth of the statement
	 * (14,000 groups at 200,000 Android reports). */
	static const st_stmt groups = {
		"compare_groups",
		"WITH per_group AS (SELECT key,"
		" coalesce(sum(reports) FILTER (WHERE value = $2), 0)::bigint AS base_reports,"
		" coalesce(sum(affected) FILTER (WHERE value = $2), 0)::bigint AS base_affected,"
		" coalesce(sum(affected) FILTER (WHERE value = $5), 0)::bigint"
		" AS target_affected,"
		" coalesce(sum(reports) FILTER (WHERE value = $5), 0)::bigint AS target_reports,"
		" coalesce(sum(stall_ms) FILTER (WHERE value = $2), 0)::bigint AS base_stall_ms,"
		" coalesce(sum(stall_ms) FILTER (WHERE value = $5), 0)::bigint AS target_stall_ms"
		" FROM group_facet_days"
		" WHERE app_id = $1 AND level = 1 AND dim = 'version' AND value IN ($2, $5)"
		" AND " DAYS " GROUP BY key HAVING sum(reports) > 0)"
		" SELECT p.key, g.frames::text, p.base_reports, p.base_affected, p.target_affected,"
		" g.culprit::text, p.target_reports, p.base_stall_ms, p.target_stall_ms"
		" FROM per_group p JOIN groups g ON g.app_id = $1 AND g.level = 1 AND g.key = "
		"p.key",
		5};
	static const st_stmt sampled = {
		"compare_sampled",
		"SELECT coalesce(sum(sampled_users) FILTER (WHERE app_version = $2), 0)::bigint,"
		" coalesce(sum(sampled_users) FILTER (WHERE app_version = $5), 0)::bigint"
		" FROM activity_daily WHERE app_id = $1 AND app_version IN ($2, $5) AND " DAYS,
		5};
	st_param p[] = {ST_INT64(app_id), ST_TEXT(base), ST_TEXT(from), ST_TEXT(to),
			ST_TEXT(target)};
	int64_t *out[] = {base_sampled, target_sampled};
	*base_sampled = *target_sampled = 0;
	int rc = st_plan_per_call(c);
	if (rc >= 0)
		rc = st_exec(c, &sampled, p, 5, read_sampled, out);
	if (rc < 0)
		return rc;
	struct compare_each e = {cb, cls};
	return st_exec(c, &groups, p, 5, read_compare, &e);
}
