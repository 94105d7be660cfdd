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
		.base_reports = st_row_int64(row, 1),
		.base_affected = st_row_int64(row, 2),
		.target_affected = st_row_int64(row, 3),
		.target_reports = st_row_int64(row, 4),
		.base_stall_ms = st_row_int64(row, 5),
		.target_stall_ms = st_row_int64(row, 6),
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

/* The sum of column COLUMN over the rows of version VERSION, 0 when none.
 * Added as float8, exact below 2^53: a bigint's sum is a numeric, made and
 * cast back for each of six sums of every group, which was 40 of the 100
 * ms of the sums at 1,000,000 Android reports (19,000 groups). */
#define SUM_OF(COLUMN, VERSION)                                                                    \
	"coalesce(sum(" COLUMN "::float8) FILTER (WHERE value = " VERSION "), 0)::bigint"

/* Each group's six sums over the two versions' rows ($2 base, $5 target). */
/* clang-format off */
#define COMPARE_GROUPS                                                                 \
	"SELECT key, " SUM_OF("reports", "$2") ", " SUM_OF("affected", "$2") ", "       \
	SUM_OF("affected", "$5") ", " SUM_OF("reports", "$5") ", "                       \
	SUM_OF("stall_ms", "$2") ", " SUM_OF("stall_ms", "$5") " FROM group_facet_days"  \
	" WHERE app_id = $1 AND level = 1 AND dim = 'version' AND value IN ($2, $5)"     \
	" AND " DAYS " GROUP BY key HAVING sum(reports::float8) > 0"
/* clang-format on */

int st_compare(st_conn *c, int64_t app_id, const char *base, const char *target, const char *from,
	       const char *to, st_compare_cb cb, void *cls, int64_t *base_sampled,
	       int64_t *target_sampled)
{
	/* The two versions' level-1 rows by group_facet_days_value_idx: per
	 * group, version and day one row, its in-sample users counted
	 * (schema/025), summed over the days: distinct user-days without a
	 * sketch read. In no order: the caller sorts by its own score, and a
	 * sort of every group's key by collation cost a fifth of the statement
	 * (14,000 groups at 200,000 Android reports). Without the groups'
	 * frames, which only a page's rows need (st_compare_faces). */
	static const st_stmt groups = {"compare_groups", COMPARE_GROUPS, 5};
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

struct face_each {
	st_compare_face_cb cb;
	void *cls;
};

static int read_face(void *cls, const st_row *row)
{
	struct face_each *e = cls;
	st_compare_face f = {.index = (size_t)st_row_int64(row, 0) - 1,
			     .frames = st_row_text(row, 1),
			     .culprit = st_row_text(row, 2)};
	return e->cb(e->cls, &f);
}

int st_compare_faces(st_conn *c, int64_t app_id, const char *keys, st_compare_face_cb cb, void *cls)
{
	static const st_stmt faces = {
		"compare_faces",
		"SELECT k.i, g.frames::text, g.culprit::text"
		" FROM unnest($2::text[]) WITH ORDINALITY AS k(key, i)"
		" JOIN groups g ON g.app_id = $1 AND g.level = 1 AND g.key = k.key",
		2};
	st_param p[] = {ST_INT64(app_id), ST_TEXT(keys)};
	struct face_each e = {cb, cls};
	return st_exec(c, &faces, p, 2, read_face, &e);
}
