/*
 * group_breakdown.c — see group_breakdown.h. Without a dimension filter
 * the facet rows answer directly: group_facet_days keeps per group, day,
 * dimension and value the reports and their users' sketch, a few rows a
 * day. A dimension filter applies to the report's other dimensions, which
 * a facet row does not keep; group_dim_days does: one row per combination
 * of the four values (dim_combos), so the matching combinations' rows are
 * summed per combination, then per value of each dimension.
 */
#include "store/group_breakdown.h"
#include "store/internal.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

/* The SQL below is laid out as SQL, which clang-format would break up. */
/* clang-format off */
/* The aggregate rows d of the asked group: level 2's when $3 (key2) is
 * given, else level 1's; a per-call plan folds the CASE to a constant, so
 * the primary key's range is (app_id, level, key, …). Then the days. */
#define GROUP_ROWS                                                                     \
	" d.app_id = $1 AND d.level = CASE WHEN $3::text IS NULL THEN 1 ELSE 2 END"     \
	" AND d.key = coalesce($3::text, $2::text)"                                     \
	" AND ($4::date IS NULL OR d.day >= $4::date)"                                  \
	" AND ($5::date IS NULL OR d.day <= $5::date)"

/* r: per dimension and value, the reports and the users' union. */
#define FACET_ROWS                                                                     \
	"WITH r AS (SELECT d.dim, d.value, sum(d.reports)::bigint AS reports,"          \
	" hll_union_agg(d.users) AS users FROM group_facet_days d WHERE" GROUP_ROWS      \
	" GROUP BY d.dim, d.value HAVING sum(d.reports) > 0),"

/* The same from the combinations that match the filters ($6 … $9): found
 * once per statement (an uncorrelated subquery), each one's rows summed,
 * then every combination counted under each of its four values. */
#define COMBO_ROWS                                                                     \
	"WITH c AS (SELECT d.combo, sum(d.reports)::bigint AS reports,"                 \
	" hll_union_agg(d.users) AS users FROM group_dim_days d WHERE" GROUP_ROWS        \
	" AND d.combo = ANY (ARRAY(SELECT x.id FROM dim_combos x WHERE x.app_id = $1"    \
	" AND ($6::text IS NULL OR x.app_version = $6)"                                 \
	" AND ($7::text IS NULL OR x.os_version = $7)"                                  \
	" AND ($8::text IS NULL OR x.device = $8) AND ($9::text IS NULL OR x.kind = $9)))" \
	" GROUP BY d.combo),"                                                           \
	" r AS (SELECT v.dim, v.value, sum(c.reports)::bigint AS reports,"              \
	" hll_union_agg(c.users) AS users FROM c JOIN dim_combos k ON k.id = c.combo,"  \
	" LATERAL (VALUES ('version', k.app_version), ('os_version', k.os_version),"    \
	" ('device', k.device), ('kind', k.kind)) AS v(dim, value)"                     \
	" GROUP BY v.dim, v.value HAVING sum(c.reports) > 0),"

/* The distinct users of a sketch (or of none) as a count. */
#define CARD(H) "coalesce(hll_cardinality(" H "), 0)::bigint"

/* One dimension's rows of shown, in order, the rest last. */
#define BY(DIM)                                                                        \
	"(SELECT coalesce(json_agg(json_build_object('value', w.value,"                 \
	" 'reports', w.reports, 'users', " CARD("w.users") ","                          \
	" 'share', w.reports::float8 / t.n) ORDER BY w.rn), '[]')"                      \
	" FROM shown w WHERE w.dim = '" DIM "')"

/* After r: the top rows of each dimension and one row of the rest; every
 * report is in exactly one kind row, so those give the totals. Nothing
 * when the group is unknown, or key2 is not one of key1's groups. */
#define TOP STR(ST_BREAKDOWN_TOP)
#define BREAKDOWN(ROWS)                                                                \
	ROWS                                                                           \
	" ranked AS (SELECT r.*, row_number() OVER (PARTITION BY r.dim"                 \
	"  ORDER BY r.reports DESC, r.value COLLATE \"C\") AS rn FROM r),"              \
	" shown AS (SELECT dim, value, reports, users, rn FROM ranked WHERE rn <= " TOP  \
	"  UNION ALL SELECT dim, NULL, sum(reports)::bigint, hll_union_agg(users),"     \
	"  " TOP " + 1 FROM ranked WHERE rn > " TOP " GROUP BY dim),"                    \
	" t AS (SELECT coalesce(sum(r.reports), 0)::bigint AS n, hll_union_agg(r.users)" \
	"  AS users FROM r WHERE r.dim = 'kind')"                                       \
	" SELECT json_build_object('reports', t.n, 'users', " CARD("t.users") ","       \
	" 'by', json_build_object('app_version', " BY("version") ","                    \
	" 'os_version', " BY("os_version") ", 'device', " BY("device") ","               \
	" 'kind', " BY("kind") "))::text FROM t"                                        \
	" WHERE EXISTS (SELECT 1 FROM groups g WHERE g.app_id = $1 AND g.level = 1"      \
	"  AND g.key = $2 AND g.reports > 0)"                                           \
	" AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM groups g WHERE g.app_id = $1"   \
	"  AND g.level = 2 AND g.key = $3 AND g.parent_key = $2 AND g.reports > 0))"
/* clang-format on */

int st_group_breakdown(st_conn *c, int64_t app_id, const char *key1, const char *key2,
		       const st_group_filter *f, char **out_json)
{
	static const st_stmt by_facet = {"group_breakdown_facet", BREAKDOWN(FACET_ROWS), 5};
	static const st_stmt by_combo = {"group_breakdown_combo", BREAKDOWN(COMBO_ROWS), 9};
	*out_json = NULL;
	/* Planned for these filters: a generic plan keeps every "IS NULL OR"
	 * branch and the level's CASE, and loses the primary key's range. */
	int rc = st_plan_per_call(c);
	if (rc < 0)
		return rc;
	st_param p[] = {ST_INT64(app_id),	ST_TEXT(key1),	    ST_TEXT(key2),
			ST_TEXT(f->from),	ST_TEXT(f->to),	    ST_TEXT(f->version),
			ST_TEXT(f->os_version), ST_TEXT(f->device), ST_TEXT(f->kind)};
	if (!f->version && !f->os_version && !f->device && !f->kind)
		return st_run_text(c, &by_facet, p, 5, out_json);
	return st_run_text(c, &by_combo, p, 9, out_json);
}
