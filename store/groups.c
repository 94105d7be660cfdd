/*
 * groups.c — the read side of groups and reports; PostgreSQL builds the
 * JSON the API returns, so a page is one round trip. See groups.h.
 */
#include <stdlib.h>
#include <string.h>

#include "store/groups.h"
#include "store/internal.h"

#define TS(x) ST_TS(x)

/* Takes the one text column of the one row. */
static int read_text(void *cls, const st_row *row)
{
	const char *t = st_row_text(row, 0);
	char **out = cls;
	free(*out);
	*out = t ? strdup(t) : NULL;
	return t && !*out ? -1 : 0;
}

int st_run_text(st_conn *c, const st_stmt *q, const st_param *params, size_t n, char **out_json)
{
	*out_json = NULL;
	int rc = st_exec(c, q, params, n, read_text, out_json);
	if (rc < 0) {
		free(*out_json);
		*out_json = NULL;
		return rc;
	}
	return *out_json ? 1 : 0;
}

/* The SQL below is laid out as SQL, which clang-format would break up. */
/* clang-format off */
/* Aggregate rows d matching the list filters ($3 … $8): group_days when
 * only the days are given (the C picks it then, so $5 … $8 are NULL: they
 * are named so every variant takes the same parameters), group_facet_days
 * under one dimension filter, group_dim_days under more. */
#define DAYS " ($3::date IS NULL OR d.day >= $3::date) AND ($4::date IS NULL OR d.day <= $4::date)"
#define DAYS_ONLY                                                                     \
	DAYS " AND $5::text IS NULL AND $6::text IS NULL AND $7::text IS NULL"          \
	     " AND $8::text IS NULL"
/* Exactly one dimension filter: that value's group_facet_days rows (the
 * constants fold in a per-call plan, so the index takes dim and value). */
#define FACET                                                                         \
	DAYS " AND d.dim = CASE WHEN $5::text IS NOT NULL THEN 'version'"               \
	     " WHEN $6::text IS NOT NULL THEN 'os_version'"                             \
	     " WHEN $7::text IS NOT NULL THEN 'device' ELSE 'kind' END"                 \
	     " AND d.value = coalesce($5::text, $6::text, $7::text, $8::text)"
/* The rows of the app's combinations of dimensions (dim_combos) that match
 * the filters: their numbers are found once per statement (an uncorrelated
 * subquery), then checked in group_dim_days' indexes (schema/039). */
#define DIMS                                                                          \
	DAYS " AND d.combo = ANY (ARRAY(SELECT c.id FROM dim_combos c WHERE c.app_id = $1" \
	     " AND ($5::text IS NULL OR c.app_version = $5)"                            \
	     " AND ($6::text IS NULL OR c.os_version = $6)"                             \
	     " AND ($7::text IS NULL OR c.device = $7) AND ($8::text IS NULL OR c.kind = $8)))"

/* A group object from g (groups row), the counts REPORTS, USERS and the
 * times FIRST, LAST (timestamptz), the severity S (a row alias with
 * stall_ms, max_duration_ms and duration_hist); the per-day series sums
 * the group's rows of TABLE (alias d) that WHERE keeps. */
#define GROUP_OBJECT(REPORTS, USERS, FIRST, LAST, S, TABLE, WHERE)                     \
	"json_build_object('key', g.key, 'level', g.level, 'parent', g.parent_key,"   \
	" 'frames', g.frames, 'culprit', g.culprit, 'reports', " REPORTS ","          \
	" 'users', " USERS ","                                                         \
	" 'first_seen', " TS(FIRST) ", 'last_seen', " TS(LAST) ","                      \
	" 'stall_ms', " S ".stall_ms, 'max_duration_ms', " S ".max_duration_ms,"         \
	" 'duration_hist', " S ".duration_hist,"                                        \
	" 'daily', (SELECT coalesce(json_agg(json_build_object('day',"                 \
	"  to_char(s.day, 'YYYY-MM-DD'), 'reports', s.n) ORDER BY s.day), '[]')"        \
	"  FROM (SELECT d.day, sum(d.reports) AS n FROM " TABLE " d"                    \
	"   WHERE d.app_id = g.app_id AND d.level = g.level AND d.key = g.key AND "     \
	WHERE " GROUP BY d.day) AS s))"

/* The group object OBJ (json) with its triage members, the row tr of
 * TRIAGE_JOIN (schema/functions/groups_triage.sql), and its percentiles,
 * the row pc of PERCENTILES_OF_ROW or PERCENTILES_OF_ROWS, as jsonb. */
#define TRIAGE(OBJ) "(" OBJ "::jsonb || tr.triage || pc.pct)"

/* p50_ms, p90_ms and p99_ms (SPEC §10.1) as the row pc: from the fine
 * histogram of one row A (a groups row), or summed over the rows of TABLE
 * (alias d) of group KEY of level LEVEL that WHERE keeps (schema/044). */
#define PERCENTILES_OF_ROW(A)                                                          \
	" LATERAL (SELECT fine_percentiles(array_agg(p.bucket), array_agg(p.n), "     \
	A ".max_duration_ms) AS pct FROM fine_pairs(kept_fine_hist(" A ".duration_fine, " \
	A ".max_duration_ms)) p) pc"
#define PERCENTILES_OF_ROWS(TABLE, LEVEL, KEY, WHERE)                                   \
	" LATERAL (SELECT fine_percentiles(array_agg(p.bucket), array_agg(p.n),"      \
	" max(d.max_duration_ms)) AS pct FROM " TABLE " d,"                               \
	" LATERAL fine_pairs(kept_fine_hist(d.duration_fine, d.max_duration_ms)) p"       \
	" WHERE d.app_id = $1 AND d.level = " LEVEL " AND d.key = " KEY " AND" WHERE ") pc"
/* The triage rows tr of the groups g of level LEVEL listed in KEYS (a
 * text[]) under the filters ARGS: one statement for a page of groups. */
#define TRIAGE_JOIN(LEVEL, KEYS, ARGS)                                                 \
	" JOIN groups_triage($1, " LEVEL "::smallint, " KEYS ", " ARGS ") tr"            \
	" ON tr.key = g.key"
#define NO_FILTERS "NULL, NULL, NULL, NULL, NULL, NULL"
#define FILTERS "$3::date, $4::date, $5::text, $6::text, $7::text, $8::text"

/* The distinct users of a sketch (or of none) as a count. */
#define CARD(H) "coalesce(hll_cardinality(" H "), 0)::bigint"

/* The severity of the rows d a query aggregates (SPEC §10.1): summed
 * durations, the longest, and the histograms added bucket by bucket (0
 * for each when no row matches). */
#define HIST_BUCKET(I)                                                                 \
	"coalesce(sum(kept_duration_bucket(d.duration_hist, d.max_duration_ms, " #I ")), 0)"
#define SEVERITY_SUMS                                                                 \
	"coalesce(sum(d.stall_ms), 0)::bigint AS stall_ms,"                             \
	" max(d.max_duration_ms) AS max_duration_ms, ARRAY[" HIST_BUCKET(1) ","          \
	HIST_BUCKET(2) "," HIST_BUCKET(3) "," HIST_BUCKET(4) "," HIST_BUCKET(5) ","       \
	HIST_BUCKET(6) "," HIST_BUCKET(7) "," HIST_BUCKET(8) "]::bigint[] AS duration_hist"

/* The keyset value of sort SORT (st_group_sort's numbers). */
#define SORT_VALUE(SORT, REPORTS, USERS, LAST, STALL)                                  \
	"CASE " SORT " WHEN 0 THEN " REPORTS " WHEN 1 THEN " USERS                       \
	" WHEN 3 THEN " STALL " ELSE (extract(epoch FROM " LAST ") * 1000000)::bigint END"

/* The level-1 key of group KEY of the page's level ($2). */
#define KEY1_OF(KEY)                                                                   \
	"CASE WHEN $2 = 1 THEN " KEY " ELSE (SELECT x.parent_key FROM groups x"          \
	" WHERE x.app_id = $1 AND x.level = 2 AND x.key = " KEY ") END"
/* Whether group KEY's status (its level-1 key's, open when none is set:
 * schema/043) is one of STATUSES (a text[], NULL for any). Few groups have
 * a status row: with open asked for, the keys of the other statuses are
 * left out (one hashed list per statement), else only theirs kept. */
#define STATUS_IN(KEY, STATUSES)                                                       \
	"(" STATUSES "::text[] IS NULL OR CASE WHEN 'open' = ANY (" STATUSES "::text[])"   \
	" THEN " KEY1_OF(KEY) " NOT IN (SELECT s.key1 FROM group_status s"               \
	" WHERE s.app_id = $1 AND s.status <> ALL (" STATUSES "::text[]))"                \
	" ELSE " KEY1_OF(KEY) " IN (SELECT s.key1 FROM group_status s"                    \
	" WHERE s.app_id = $1 AND s.status = ANY (" STATUSES "::text[])) END)"

/* The CTE "listed": the page's groups, the first LIMIT rows of CTE
 * "page" (columns key and v) after the cursor (AFTER_V, AFTER_KEY) in
 * (v, key) descending order. */
#define AFTER(AFTER_V, AFTER_KEY)                                                      \
	"(" AFTER_KEY "::text IS NULL OR (a.v, a.key) < (" AFTER_V "::bigint, " AFTER_KEY  \
	"::text))"
#define UNSEARCHED(AFTER_V, AFTER_KEY, LIMIT, PATTERN)                                 \
	" listed AS (SELECT * FROM page a WHERE " PATTERN "::text IS NULL AND "           \
	AFTER(AFTER_V, AFTER_KEY) " ORDER BY a.v DESC, a.key DESC LIMIT " LIMIT ")"

/* The same, keeping only groups with a search term (schema/046,
 * group_terms) matching PATTERN (an ILIKE pattern). Two ways, and no plan
 * is good for both: a pattern most groups match (the app's package, java)
 * wants the page walked in order, each group's terms probed until LIMIT
 * match; a pattern few match wants the matching terms read from the
 * trigram index, and a walk would probe every group for nothing. At
 * 200,000 Android reports the walk took 84 ms for "java", the trigram
 * read 250 ms, and PostgreSQL chose either by its estimates
 * (docs/journal/performance.md). So the statement walks the first
 * SEARCH_WALK groups ("walked": a lateral probe, one index range each,
 * over the rows of "cand" in their order) and reads the index only when
 * that walk neither filled the page nor saw the whole list: a one-time
 * filter, so the unused branch never runs. */
#define SEARCH_WALK "500"
#define SEARCHED(AFTER_V, AFTER_KEY, LIMIT, PATTERN)                                   \
	" cand AS (SELECT * FROM page a WHERE " AFTER(AFTER_V, AFTER_KEY)                 \
	" ORDER BY a.v DESC, a.key DESC LIMIT " SEARCH_WALK "),"                           \
	" walked AS (SELECT c.* FROM cand c CROSS JOIN LATERAL (SELECT FROM group_terms t" \
	" WHERE t.app_id = $1 AND t.level = $2 AND t.key = c.key AND t.term ILIKE "        \
	PATTERN "::text LIMIT 1) m LIMIT " LIMIT "),"                                     \
	" walk_done AS (SELECT (SELECT count(*) FROM walked) = " LIMIT                    \
	" OR (SELECT count(*) FROM cand) < " SEARCH_WALK " AS yes),"                       \
	" listed AS (SELECT * FROM walked WHERE (SELECT yes FROM walk_done)"              \
	" UNION ALL (SELECT * FROM page a WHERE NOT (SELECT yes FROM walk_done) AND "      \
	AFTER(AFTER_V, AFTER_KEY) " AND a.key IN (SELECT t.key FROM group_terms t"        \
	" WHERE t.app_id = $1 AND t.level = $2 AND t.term ILIKE " PATTERN "::text)"       \
	" ORDER BY a.v DESC, a.key DESC LIMIT " LIMIT "))"

/* A page over TABLE's rows that WHERE keeps: sums per group first (no
 * sketch read unless sort=users, of the durations only their sum, which
 * sort=stall_ms needs), the page cut, then each listed group's users as
 * the union of its rows and its durations' max and histogram. */
#define FILTERED_PAGE(TABLE, WHERE, SEARCH)                                            \
	"WITH agg AS (SELECT d.key, sum(d.reports)::bigint AS reports,"                 \
	" hll_union_agg(d.users) FILTER (WHERE $9::integer = 1) AS users,"               \
	" min(d.first_seen) AS first_seen, max(d.last_seen) AS last_seen,"               \
	" sum(d.stall_ms)::bigint AS stall_ms"                                          \
	" FROM " TABLE " d WHERE d.app_id = $1 AND d.level = $2 AND" WHERE               \
	" GROUP BY d.key HAVING sum(d.reports) > 0),"                                   \
	" page AS (SELECT a.*, " SORT_VALUE("$9::integer", "a.reports", CARD("a.users"), \
					    "a.last_seen", "a.stall_ms") " AS v FROM agg a"     \
	" WHERE " STATUS_IN("a.key", "$13") "),"                                       \
	SEARCH("$10", "$11", "$12", "$14")                                             \
	" SELECT coalesce(json_agg(p.obj || jsonb_build_object('cursor',"              \
	" p.v::text || '.' || p.key) ORDER BY p.v DESC, p.key DESC), '[]')::text FROM (" \
	" SELECT a.key, a.v, "                                                         \
	TRIAGE(GROUP_OBJECT("a.reports", "u.users", "a.first_seen", "a.last_seen", "s", TABLE, \
			    WHERE))                                                    \
	" AS obj FROM listed a"                                                         \
	" JOIN groups g ON g.app_id = $1 AND g.level = $2 AND g.key = a.key"           \
	TRIAGE_JOIN("$2", "ARRAY(SELECT key FROM listed)", FILTERS) ","                \
	" LATERAL (SELECT CASE WHEN $9::integer = 1 THEN " CARD("a.users")             \
	" ELSE (SELECT " CARD("hll_union_agg(d.users)") " FROM " TABLE " d"               \
	"  WHERE d.app_id = $1 AND d.level = $2 AND d.key = a.key AND" WHERE ") END"      \
	" AS users) AS u,"                                                              \
	" LATERAL (SELECT " SEVERITY_SUMS " FROM " TABLE " d"                            \
	"  WHERE d.app_id = $1 AND d.level = $2 AND d.key = a.key AND" WHERE ") AS s,"   \
	PERCENTILES_OF_ROWS(TABLE, "$2", "a.key", WHERE) ") AS p"

static int dimensions(const st_group_filter *f)
{
	return !!f->version + !!f->os_version + !!f->device + !!f->kind;
}

/* The variant of a filtered statement: days only, one dimension, more. */
static const st_stmt *variant(const st_group_filter *f, const st_stmt *days,
			      const st_stmt *facet, const st_stmt *dims)
{
	int n = dimensions(f);
	return n == 0 ? days : n == 1 ? facet : dims;
}

static bool filtered(const st_group_filter *f)
{
	return f->from || f->to || dimensions(f) > 0;
}

/* The statements with optional filters are planned at every call: a
 * generic plan cannot drop "$3 IS NULL OR …" and loses the index
 * conditions, which PostgreSQL switches to from a statement's sixth call.
 * Their sorts and hashes (per group over a range) get the memory they need
 * without spilling, for this transaction only. */
int st_plan_per_call(st_conn *c)
{
	return st_exec_script(c,
			      "SET LOCAL plan_cache_mode = force_custom_plan;"
			      " SET LOCAL work_mem = '64MB'",
			      "plan_per_call");
}

int64_t st_group_deltas_fold(st_conn *c, int64_t app_id)
{
	static const st_stmt q = {"group_deltas_fold", "SELECT fold_group_deltas($1)", 1};
	int64_t folded = 0;
	int rc = ST_EXEC(c, &q, st_read_int64, &folded, ST_INT64(app_id));
	return rc < 0 ? rc : folded;
}

/* A page of the groups' own totals (all time, no filter); SEARCH is
 * SEARCHED or UNSEARCHED. */
#define ALL_PAGE(SEARCH)                                                               \
	"WITH page AS NOT MATERIALIZED (SELECT g.key, "                                  \
	SORT_VALUE("$3::integer", "g.reports", "g.users", "g.last_seen", "g.stall_ms")   \
	" AS v FROM groups g WHERE g.app_id = $1 AND g.level = $2 AND g.reports > 0"      \
	" AND " STATUS_IN("g.key", "$7") "),"                                           \
	SEARCH("$4", "$5", "$6", "$8")                                                 \
	" SELECT coalesce(json_agg(p.obj || jsonb_build_object('cursor',"              \
	" p.v::text || '.' || p.key) ORDER BY p.v DESC, p.key DESC), '[]')::text FROM (" \
	" SELECT g.key, l.v, "                                                         \
	TRIAGE(GROUP_OBJECT("g.reports", "g.users", "g.first_seen", "g.last_seen", "g",  \
			    "group_days", "true"))                                     \
	" AS obj FROM listed l JOIN groups g ON g.app_id = $1 AND g.level = $2"           \
	" AND g.key = l.key"                                                           \
	TRIAGE_JOIN("$2", "ARRAY(SELECT key FROM listed)", NO_FILTERS) ","               \
	PERCENTILES_OF_ROW("g") ") AS p"

int st_groups_page(st_conn *c, int64_t app_id, int level, const st_group_filter *f,
		   st_group_sort sort, int64_t after_value, const char *after_key,
		   int64_t limit, const char *statuses, char **out_json)
{
	/* All time, no filter: the groups' own totals. */
	static const st_stmt all = {"groups_page_all", ALL_PAGE(UNSEARCHED), 8};
	static const st_stmt all_searched = {"groups_page_all_q", ALL_PAGE(SEARCHED), 8};
	static const st_stmt by_days[] = {
		{"groups_page_days", FILTERED_PAGE("group_days", DAYS_ONLY, UNSEARCHED), 14},
		{"groups_page_days_q", FILTERED_PAGE("group_days", DAYS_ONLY, SEARCHED), 14}};
	static const st_stmt by_facet[] = {
		{"groups_page_facet", FILTERED_PAGE("group_facet_days", FACET, UNSEARCHED), 14},
		{"groups_page_facet_q", FILTERED_PAGE("group_facet_days", FACET, SEARCHED), 14}};
	static const st_stmt by_dims[] = {
		{"groups_page_dims", FILTERED_PAGE("group_dim_days", DIMS, UNSEARCHED), 14},
		{"groups_page_dims_q", FILTERED_PAGE("group_dim_days", DIMS, SEARCHED), 14}};
	int searched = f->search != NULL;
	if (!filtered(f)) {
		st_param p[] = {ST_INT64(app_id),      ST_INT64(level),	   ST_INT64(sort),
				ST_INT64(after_value), ST_TEXT(after_key), ST_INT64(limit),
				ST_TEXT(statuses),     ST_TEXT(f->search)};
		/* A search's pattern is planned with its trigrams. */
		int rc = f->search ? st_plan_per_call(c) : 0;
		return rc < 0 ? rc : st_run_text(c, searched ? &all_searched : &all, p, 8, out_json);
	}
	int rc = st_plan_per_call(c);
	/* sort=users unions a sketch per group of the range. A hash table
	 * keeps every group's union state at once, about 16 KB each whatever
	 * its users: at 1,000,000 reports 8,600 groups spilled 21 batches to
	 * disk even with 256 MB. Sorted by key, one union state lives at a
	 * time (docs/journal/performance.md: 20 ms of ~115 under two filters). */
	if (rc >= 0 && sort == ST_SORT_USERS)
		rc = st_exec_script(c, "SET LOCAL enable_hashagg = off", "groups_page_users");
	/* Two or more filters: the matching combinations' rows (DIMS) are
	 * thousands spread over the table, one index range per combination.
	 * PostgreSQL read them in index order, a heap page per row; as a bitmap
	 * it reads each page once (at 1,000,000 reports 17 against 32 ms of
	 * the scan, 85 against 115 ms for sort=users: docs/journal/performance.md). */
	if (rc >= 0 && dimensions(f) > 1)
		rc = st_exec_script(c, "SET LOCAL enable_indexscan = off", "groups_page_dims");
	if (rc < 0)
		return rc;
	st_param p[] = {ST_INT64(app_id), ST_INT64(level), ST_TEXT(f->from), ST_TEXT(f->to),
			ST_TEXT(f->version), ST_TEXT(f->os_version), ST_TEXT(f->device),
			ST_TEXT(f->kind), ST_INT64(sort), ST_INT64(after_value),
			ST_TEXT(after_key), ST_INT64(limit), ST_TEXT(statuses), ST_TEXT(f->search)};
	return st_run_text(c, variant(f, &by_days[searched], &by_facet[searched], &by_dims[searched]),
			   p, 14, out_json);
}

/* The detail exists when the group has had a report at all. */
#define GROUP_KNOWN                                                                   \
	" WHERE EXISTS (SELECT 1 FROM groups WHERE app_id = $1 AND level = 1 AND key = $2" \
	" AND reports > 0)"

/* A group's detail from TABLE's rows that WHERE keeps: its own rows by
 * (level 1, key1), its subgroups' (groups.parent_key) by (level 2, key2). */
#define FILTERED_DETAIL(TABLE, WHERE)                                                  \
	"WITH sub AS (SELECT d.key, sum(d.reports)::bigint AS reports,"                 \
	" " CARD("hll_union_agg(d.users)") " AS users, min(d.first_seen) AS first_seen," \
	" max(d.last_seen) AS last_seen, " SEVERITY_SUMS " FROM groups s JOIN " TABLE " d" \
	" ON d.app_id = s.app_id AND d.level = 2 AND d.key = s.key"                     \
	" WHERE s.app_id = $1 AND s.level = 2 AND s.parent_key = $2 AND" WHERE           \
	" GROUP BY d.key HAVING sum(d.reports) > 0),"                                   \
	" top AS (SELECT coalesce(sum(d.reports), 0)::bigint AS reports,"               \
	" " CARD("hll_union_agg(d.users)") " AS users, min(d.first_seen) AS first_seen," \
	" max(d.last_seen) AS last_seen, " SEVERITY_SUMS " FROM " TABLE " d"            \
	" WHERE d.app_id = $1 AND d.level = 1 AND d.key = $2 AND" WHERE ")"              \
	" SELECT json_build_object('group', (SELECT "                                  \
	TRIAGE(GROUP_OBJECT("t.reports", "t.users", "t.first_seen", "t.last_seen", "t", TABLE, \
			    WHERE))                                                    \
	" FROM top t, groups g" TRIAGE_JOIN("1", "ARRAY[$2::text]", FILTERS) ","          \
	PERCENTILES_OF_ROWS(TABLE, "1", "$2", WHERE)                                    \
	" WHERE g.app_id = $1 AND g.level = 1 AND g.key = $2),"                         \
	" 'subgroups', (SELECT coalesce(json_agg("                                      \
	TRIAGE(GROUP_OBJECT("a.reports", "a.users", "a.first_seen", "a.last_seen", "a", TABLE, \
			    WHERE))                                                    \
	" ORDER BY a.reports DESC, g.key), '[]') FROM sub a"                             \
	" JOIN groups g ON g.app_id = $1 AND g.level = 2 AND g.key = a.key"             \
	TRIAGE_JOIN("2", "ARRAY(SELECT key FROM sub)", FILTERS) ","                      \
	PERCENTILES_OF_ROWS(TABLE, "2", "a.key", WHERE) "))::text"                       \
	GROUP_KNOWN

int st_group_detail(st_conn *c, int64_t app_id, const char *key1, const st_group_filter *f,
		    char **out_json)
{
	static const st_stmt all = {
		"group_detail",
		"SELECT json_build_object('group', (SELECT "
		TRIAGE(GROUP_OBJECT("g.reports", "g.users", "g.first_seen", "g.last_seen", "g",
				    "group_days", "true"))
		" FROM groups g" TRIAGE_JOIN("1", "ARRAY[$2::text]", NO_FILTERS) ","
		PERCENTILES_OF_ROW("g")
		" WHERE g.app_id = $1 AND g.level = 1 AND g.key = $2),"
		" 'subgroups', (SELECT coalesce(json_agg("
		TRIAGE(GROUP_OBJECT("g.reports", "g.users", "g.first_seen", "g.last_seen", "g",
				    "group_days", "true"))
		" ORDER BY g.reports DESC, g.key), '[]') FROM groups g"
		TRIAGE_JOIN("2", "ARRAY(SELECT key FROM groups WHERE app_id = $1 AND level = 2"
			    " AND parent_key = $2 AND reports > 0)", NO_FILTERS) ","
		PERCENTILES_OF_ROW("g")
		" WHERE g.app_id = $1 AND g.level = 2 AND g.parent_key = $2 AND g.reports > 0))::text"
		GROUP_KNOWN,
		2};
	static const st_stmt by_days = {"group_detail_days",
					FILTERED_DETAIL("group_days", DAYS_ONLY), 8};
	static const st_stmt by_facet = {"group_detail_facet",
					 FILTERED_DETAIL("group_facet_days", FACET), 8};
	static const st_stmt by_dims = {"group_detail_dims",
					FILTERED_DETAIL("group_dim_days", DIMS), 8};
	if (!filtered(f)) {
		st_param p[] = {ST_INT64(app_id), ST_TEXT(key1)};
		return st_run_text(c, &all, p, 2, out_json);
	}
	int rc = st_plan_per_call(c);
	if (rc < 0)
		return rc;
	st_param p[] = {ST_INT64(app_id),   ST_TEXT(key1),	 ST_TEXT(f->from),
			ST_TEXT(f->to),	    ST_TEXT(f->version), ST_TEXT(f->os_version),
			ST_TEXT(f->device), ST_TEXT(f->kind)};
	return st_run_text(c, variant(f, &by_days, &by_facet, &by_dims), p, 8, out_json);
}
/* clang-format on */

int st_group_reports_page(st_conn *c, int64_t app_id, const char *key1, const char *key2,
			  const st_group_filter *f, int64_t after_us, int64_t after_id,
			  int64_t limit, char **out_json)
{
	/* The filters read the row's columns as the aggregates store them (a
	 * missing version is ''), so the list and this page agree. Planned at
	 * every call, with filters or without: a day range then prunes the day
	 * partitions, and the generic plan PostgreSQL may switch to from the
	 * sixth call keeps "$5 = 0 OR …" as a filter, sorting every report of
	 * the group (at 1,000,000 reports 565 ms against 0.5 ms for the
	 * largest group: docs/journal/performance.md). */
	/* clang-format off */
	static const st_stmt q = {
		"group_reports_page",
		"SELECT " ST_REPORT_SUMMARIES("")
		" FROM (SELECT * FROM reports r WHERE r.app_id = $1"
		" AND group_key_hash(r.key1) = group_key_hash($2)"
		" AND group_key_hash(r.key2) = group_key_hash($3)"
		" AND report_in_group(r.key1, r.key2, $2, $3)"
		" AND ($5::bigint = 0 OR (r.received_at, r.id) <"
		" (to_timestamp($4::bigint / 1000000.0), $5::bigint))"
		" AND ($7::date IS NULL OR r.received_day >= $7::date)"
		" AND ($8::date IS NULL OR r.received_day <= $8::date)"
		" AND ($9::text IS NULL OR coalesce(r.app_version, '') = $9)"
		" AND ($10::text IS NULL OR coalesce(r.os_version, '') = $10)"
		" AND ($11::text IS NULL OR coalesce(r.device, '') = $11)"
		" AND ($12::text IS NULL OR r.kind = $12)"
		" ORDER BY r.received_at DESC, r.id DESC LIMIT $6) AS r",
		12};
	/* clang-format on */
	st_param p[] = {ST_INT64(app_id),	ST_TEXT(key1),	    ST_TEXT(key2),
			ST_INT64(after_us),	ST_INT64(after_id), ST_INT64(limit),
			ST_TEXT(f->from),	ST_TEXT(f->to),	    ST_TEXT(f->version),
			ST_TEXT(f->os_version), ST_TEXT(f->device), ST_TEXT(f->kind)};
	int rc = st_plan_per_call(c);
	return rc < 0 ? rc : st_run_text(c, &q, p, 12, out_json);
}

int st_dimensions(st_conn *c, int64_t app_id, const char *from, const char *to, char **out_json)
{
	/* Values tie-break in byte order (COLLATE "C"), whatever the
	 * database's locale. */
#define DIMENSION(KEY, DIM, ORDER)                                                    \
	"'" KEY "', (SELECT coalesce(json_agg(json_build_object('value', v.value,"      \
	" 'reports', v.reports, 'first_seen', " TS("v.first_seen") ","                  \
	" 'last_seen', " TS("v.last_seen") ") ORDER BY " ORDER ", v.value COLLATE \"C\"),"  \
	" '[]') FROM v WHERE v.dim = '" DIM "')"
	static const st_stmt q = {
		"dimensions",
		"WITH v AS (SELECT a.dim, a.value,"
		" sum(a.reports)::bigint AS reports,"
		" min(a.first_seen) AS first_seen, max(a.last_seen) AS last_seen"
		" FROM app_dimensions a WHERE a.app_id = $1"
		" AND ($2::date IS NULL OR a.day >= $2::date)"
		" AND ($3::date IS NULL OR a.day <= $3::date)"
		" GROUP BY a.dim, a.value HAVING sum(a.reports) > 0)"
		" SELECT json_build_object("
		DIMENSION("versions", "version", "v.first_seen DESC") ","
		DIMENSION("os_versions", "os_version", "v.reports DESC") ","
		DIMENSION("devices", "device", "v.reports DESC") ","
		DIMENSION("kinds", "kind", "v.reports DESC") ")::text",
		3};
#undef DIMENSION
	st_param p[] = {ST_INT64(app_id), ST_TEXT(from), ST_TEXT(to)};
	return st_run_text(c, &q, p, 3, out_json);
}

int st_dsyms_missing(st_conn *c, int64_t app_id, bool system, int64_t after_reports,
		     const char *after_uuid, int64_t limit, char **out_json)
{
	/* One row per UUID, named by its basename whatever path a report gave
	 * (the path beside it when one did: each day's row keeps a path over a
	 * basename, and so do the days together, image_name_kept); the
	 * versions (schema/046) read for the page's rows only, newest first by
	 * the version order (app_version_key, docs/TRIAGE.md); last_seen a
	 * time like every reply's, the day's end for a counter older than 046
	 * that has none. */
#define REASON "CASE WHEN $2::boolean THEN 'system_missing' ELSE 'missing' END"
	/* clang-format off */
	static const st_stmt q = {
		"dsyms_missing",
		"SELECT coalesce(json_agg(json_build_object('uuid', m.uuid, 'arch', m.arch,"
		" 'kind', CASE WHEN m.arch = 'java' THEN 'method_mapping' ELSE 'image' END,"
		" 'build', substring(m.image FROM '^matrix/(.*)/methodMapping[.]txt$'),"
		" 'name', regexp_replace(m.image, '^.*/', ''),"
		" 'path', CASE WHEN strpos(m.image, '/') > 0 THEN m.image END,"
		" 'system', $2::boolean, 'reports', m.reports,"
		" 'app_versions', (SELECT coalesce(json_agg(d.v ORDER BY app_version_key(d.v, NULL)"
		"  DESC, d.v DESC), '[]') FROM (SELECT DISTINCT a.v FROM image_waits x,"
		"  unnest(x.app_versions) AS a(v) WHERE x.app_id = $1 AND x.uuid = m.id"
		"  AND x.reason = " REASON " AND a.v <> '') AS d(v)),"
		" 'last_seen', " TS("m.last_seen") ", 'cursor', m.reports || '.' || m.hex)"
		" ORDER BY m.reports DESC, m.uuid), '[]')::text FROM ("
		" SELECT w.uuid AS id, upper(w.uuid::text) AS uuid,"
		" replace(w.uuid::text, '-', '') AS hex,"
		" max(w.arch) AS arch, image_name_kept(max(w.image_name) FILTER"
		" (WHERE strpos(w.image_name, '/') > 0), max(w.image_name)) AS image,"
		" sum(w.reports)::bigint AS reports,"
		" coalesce(max(w.last_seen), (max(w.day) + 1)::timestamp AT TIME ZONE 'UTC'"
		"  - interval '1 second') AS last_seen"
		" FROM image_waits w WHERE w.app_id = $1 AND w.reason = " REASON
		" AND NOT EXISTS (SELECT 1 FROM debug_files d WHERE d.app_id = w.app_id"
		" AND d.uuid = w.uuid)"
		" AND NOT EXISTS (SELECT 1 FROM system_symbols s WHERE s.uuid = w.uuid)"
		" GROUP BY w.uuid"
		" HAVING $4::uuid IS NULL OR sum(w.reports) < $3::bigint"
		" OR (sum(w.reports) = $3::bigint AND w.uuid > $4::uuid)"
		" ORDER BY reports DESC, w.uuid LIMIT $5) AS m",
		5};
	/* clang-format on */
#undef REASON
	st_param p[] = {ST_INT64(app_id), ST_BOOL(system), ST_INT64(after_reports),
			ST_TEXT(after_uuid), ST_INT64(limit)};
	return st_run_text(c, &q, p, 5, out_json);
}

static int read_location(void *cls, const st_row *row)
{
	return st_row_copy(row, 0, cls, 11);
}

int st_report_locate(st_conn *c, int64_t app_id, int64_t id, char out_day[11])
{
	/* Each of the app's day partitions answers through its id index
	 * (schema/037): a few pages per day kept. */
	static const st_stmt q = {"report_locate",
				  "SELECT to_char(received_day, 'YYYY-MM-DD') FROM reports"
				  " WHERE app_id = $1 AND id = $2",
				  2};
	return ST_EXEC(c, &q, read_location, out_day, ST_INT64(app_id), ST_INT64(id));
}

int st_report_json(st_conn *c, int64_t app_id, const char *day, int64_t id, char **out_json)
{
	static const st_stmt q = {
		"report_json",
		/* Its documents' stacks put back (schema/018: unstack), and the
		 * group frames a symbolized document stored since 2026-11-26
		 * leaves to its level-2 group (the key is their hash); an
		 * Android stack's durations back in its frames (schema/051). */
		"SELECT (jsonb_build_object('id', r.id, 'report_id', r.report_id,"
		" 'user_id', r.user_id, 'kind', r.kind, 'source', r.source,"
		" 'app_version', r.app_version, 'build', r.build, 'os', r.os,"
		" 'os_version', r.os_version, 'os_build', r.os_build, 'device', r.device,"
		" 'timestamp', r.client_timestamp, 'duration_ms', r.duration_ms,"
		" 'has_samples', u.raw ? 'samples', 'pending', r.pending)"
		/* An Android report: Matrix's stackKey and the element kept. */
		" || CASE WHEN u.raw ? 'matrix' THEN jsonb_build_object('client_key',"
		" nullif(u.raw->'matrix'->>'stackKey', ''), 'matrix', u.raw->'matrix')"
		" ELSE '{}' END"
		" || (SELECT stack_durations_shown(CASE WHEN d->'stack' ? 'thread'"
		" AND NOT d->'stack' ? 'frames' THEN jsonb_set(d, '{stack,frames}',"
		" d->'threads'->((d->'stack'->>'thread')::int)->'frames') ELSE d END)"
		" || CASE WHEN d ? 'frames' THEN '{}' ELSE jsonb_build_object('frames',"
		" (SELECT g.frames FROM groups g WHERE g.app_id = r.app_id AND g.level = 2"
		" AND g.key = r.key2)) END"
		" FROM (SELECT unstack(r.app_id, r.symbolized, r.symbolized_stacks)::jsonb)"
		" AS x(d))"
		" || jsonb_build_object('key1', r.key1, 'key2', r.key2, 'received_at', " TS(
			"r.received_at") "))::text FROM reports r,"
					 " LATERAL (SELECT unstack(r.app_id, r.raw, "
					 "r.raw_stacks)::jsonb AS raw) u"
					 " WHERE r.app_id = $1 AND r.received_day = $2::date AND "
					 "r.id = $3",
		3};
	st_param p[] = {ST_INT64(app_id), ST_TEXT(day), ST_INT64(id)};
	return st_run_text(c, &q, p, 3, out_json);
}

int st_report_raw(st_conn *c, int64_t app_id, const char *day, int64_t id,
		  char **out_json)
{
	static const st_stmt q = {"report_raw",
				  "SELECT report_raw(r) FROM reports r WHERE app_id = $1"
				  " AND received_day = $2::date AND id = $3",
				  3};
	st_param p[] = {ST_INT64(app_id), ST_TEXT(day), ST_INT64(id)};
	return st_run_text(c, &q, p, 3, out_json);
}
