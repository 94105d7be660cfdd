/*
 * check.c — see check.h. Each equality is one statement whose rows are its
 * disagreements, in the same seven columns: the app's bundle id, level,
 * group key, day, a detail, what was expected and what was found. $1 is
 * the app's id, NULL for every app.
 *
 * What is compared is only what docs/STORAGE.md promises:
 *   - the aggregates among themselves, over all time (retention keeps
 *     them whole): a groups row = Σ its group_days rows; a group_days row
 *     = Σ its group_dim_days rows = Σ its group_facet_days rows of each
 *     dimension; a level-1 group's day = Σ its level-2 groups' days. The
 *     deltas not folded yet are in neither side (the fold writes all of
 *     them in one transaction, schema/028), so they cancel out;
 *   - the aggregates against the stored reports, only on the days whose
 *     partition exists (retention drops a day's reports and keeps its
 *     counts): a group's day, the call tree's counts per version and the
 *     pick lists = the day's reports, once the deltas not folded yet are
 *     added to the aggregates; report_keys, user_quota and image_waits =
 *     the reports' own rows, quota-counted reports and waits;
 *   - every stack a report, call-tree row or delta refers to is kept, to a
 *     day no earlier than its referrer's (stacks.last_day, schema/041);
 *   - every report's and delta's keys name both its groups, the level-2
 *     one under the level-1 one;
 *   - no row of a day-keyed table whose reports' partition is gone (the
 *     purge deletes them with it), and, as a note, partitions older than
 *     retention keeps (the daily pass drops them: not a disagreement).
 * The sums of durations (stall_ms) move with the reports exactly, so
 * they are compared beside them; users (sketches) and bounds are not:
 * reprocessing leaves them upper bounds until a recount.
 */
#include "store/check.h"

#include "store/internal.h"

#define APP(col) "($1::bigint IS NULL OR " col " = $1)"

/* The app and day of every day partition of reports (their names, as
 * drop_report_partitions reads them). Materialized: inlined, a join's
 * hash kept the names and parsed them again at every probe (17 s for
 * 1,000,000 report_keys rows). */
#define PARTS                                                                                      \
	"parts AS MATERIALIZED (SELECT"                                                            \
	" substring(c.relname FROM '^reports_a([0-9]+)_')::bigint AS app_id,"                      \
	" to_date(right(c.relname, 8), 'YYYYMMDD') AS day"                                         \
	" FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"                                \
	" WHERE i.inhparent IN (SELECT h.inhrelid FROM pg_inherits h"                              \
	" WHERE h.inhparent = 'reports'::regclass)"                                                \
	" AND c.relname ~ '^reports_a[0-9]+_[0-9]{8}$')"

/* The lost stack's hash (representative_stack). */
#define NIL_STACK "'00000000-0000-0000-0000-000000000000'"

#define COUNTS(n, ms) "format('%s reports, %s ms', coalesce(" n ", 0), coalesce(" ms ", 0))"
#define DIFFER(a, b)  "coalesce(" a ", 0) <> coalesce(" b ", 0)"

/* clang-format off */
/* The rows of ONE (app_id, the other KEYS, n and ms) whose n or ms
 * differ from the sums of the rows of MANY (the same columns) with the
 * same KEYS (a USING list); SELECTED are the level, key and day columns. */
#define SUMS_AGREE(one, many, keys, selected, detail)                                              \
	"WITH o AS (" one "), m AS (SELECT " keys ", sum(n) AS n, sum(ms) AS ms"                   \
	" FROM (" many ") AS x GROUP BY " keys ")"                                                 \
	" SELECT a.bundle_id, " selected ", " detail ", " COUNTS("m.n", "m.ms") ","                \
	" " COUNTS("o.n", "o.ms") " FROM o FULL JOIN m USING (" keys ")"                           \
	" JOIN apps a ON a.id = app_id"                                                            \
	" WHERE " DIFFER("o.n", "m.n") " OR " DIFFER("o.ms", "m.ms") " ORDER BY 1, 2, 3, 4"

/* clang-format on */

/* group_days rows as SUMS_AGREE counts them, with EXTRA columns. */
#define DAY_ROWS(extra)                                                                            \
	"SELECT app_id, level, key, day" extra ", reports AS n, stall_ms AS ms FROM group_days"

typedef struct check {
	const char *name;
	const char *expected_as, *found_as;
	bool note;
	st_stmt stmt;
} check;

/* clang-format off */
static const check checks[] = {
	{"group counters", "Σ group_days", "groups", false, {"check_groups",
	 SUMS_AGREE("SELECT app_id, level, key, reports AS n, stall_ms AS ms FROM groups"
		    " WHERE " APP("app_id"),
		    "SELECT app_id, level, key, reports AS n, stall_ms AS ms FROM group_days"
		    " WHERE " APP("app_id"),
		    "app_id, level, key", "level, key, NULL::date", "NULL::text"), 1}},
	{"dimension rows", "Σ group_dim_days", "group_days", false, {"check_dims",
	 SUMS_AGREE(DAY_ROWS("") " WHERE " APP("app_id"),
		    "SELECT app_id, level, key, day, reports AS n, stall_ms AS ms"
		    " FROM group_dim_days WHERE " APP("app_id"),
		    "app_id, level, key, day", "level, key, day", "NULL::text"), 1}},
	{"facet rows", "Σ group_facet_days of the dimension", "group_days", false, {"check_facets",
	 SUMS_AGREE(DAY_ROWS(", x.dim") ", (VALUES ('device'), ('kind'), ('os_version'),"
		    " ('version')) AS x(dim) WHERE " APP("app_id"),
		    "SELECT app_id, level, key, day, dim, reports AS n, stall_ms AS ms"
		    " FROM group_facet_days WHERE " APP("app_id"),
		    "app_id, level, key, day, dim", "level, key, day", "'dimension ' || dim"), 1}},
	{"levels", "Σ its level-2 groups' group_days", "the level-1 group_days row", false,
	 {"check_levels",
	 SUMS_AGREE("SELECT app_id, key, day, reports AS n, stall_ms AS ms FROM group_days"
		    " WHERE level = 1 AND " APP("app_id"),
		    "SELECT d.app_id, g.parent_key AS key, d.day, d.reports AS n, d.stall_ms AS ms"
		    " FROM group_days d JOIN groups g"
		    " ON g.app_id = d.app_id AND g.level = 2 AND g.key = d.key"
		    " WHERE d.level = 2 AND " APP("d.app_id"),
		    "app_id, key, day", "1, key, day", "NULL::text"), 1}},
	{"group keys", "both groups, the level-2 one under the level-1 one", "groups", false,
	 {"check_keys",
	 "WITH k AS (SELECT app_id, key1, key2, count(*) AS n FROM"
	 " (SELECT app_id, key1, key2 FROM reports WHERE " APP("app_id")
	 " UNION ALL SELECT app_id, key1, key2 FROM group_deltas WHERE " APP("app_id") ") AS x"
	 " GROUP BY 1, 2, 3)"
	 " SELECT a.bundle_id, 2, k.key2, NULL::date,"
	 " format('%s reports and deltas keyed (%s, %s)', k.n, k.key1, k.key2),"
	 " format('level-1 group %s, level-2 group %s under it', k.key1, k.key2),"
	 " CASE WHEN g1.key IS NULL THEN 'no level-1 group' WHEN g2.key IS NULL"
	 " THEN 'no level-2 group' ELSE format('level-2 group under %s', g2.parent_key) END"
	 " FROM k JOIN apps a ON a.id = k.app_id"
	 " LEFT JOIN groups g1 ON g1.app_id = k.app_id AND g1.level = 1 AND g1.key = k.key1"
	 " LEFT JOIN groups g2 ON g2.app_id = k.app_id AND g2.level = 2 AND g2.key = k.key2"
	 " WHERE g1.key IS NULL OR g2.key IS NULL OR g2.parent_key IS DISTINCT FROM k.key1"
	 " ORDER BY 1, 3", 1}},
	{"reports per group and day", "the day's reports", "group_days + unfolded deltas", false,
	 {"check_group_reports",
	 "WITH " PARTS ","
	 " r AS (SELECT app_id, key1, key2, received_day AS day, count(*) AS n,"
	 " sum(duration_ms) AS ms FROM reports WHERE " APP("app_id") " GROUP BY 1, 2, 3, 4),"
	 " w AS (SELECT d.app_id, d.key1, d.key2, d.day, count(*) AS n, sum(d.duration_ms) AS ms"
	 " FROM group_deltas d JOIN parts p ON p.app_id = d.app_id AND p.day = d.day"
	 " WHERE " APP("d.app_id") " GROUP BY 1, 2, 3, 4),"
	 " rl AS (SELECT app_id, l.level, CASE l.level WHEN 1 THEN key1 ELSE key2 END AS key, day,"
	 " sum(n) AS n, sum(ms) AS ms FROM r, (VALUES (1::smallint), (2::smallint)) AS l(level)"
	 " GROUP BY 1, 2, 3, 4),"
	 " wl AS (SELECT app_id, l.level, CASE l.level WHEN 1 THEN key1 ELSE key2 END AS key, day,"
	 " sum(n) AS dn, sum(ms) AS dms FROM w, (VALUES (1::smallint), (2::smallint)) AS l(level)"
	 " GROUP BY 1, 2, 3, 4),"
	 " g AS (SELECT d.app_id, d.level, d.key, d.day, d.reports AS gn, d.stall_ms AS gms"
	 " FROM group_days d JOIN parts p ON p.app_id = d.app_id AND p.day = d.day"
	 " WHERE " APP("d.app_id") ")"
	 " SELECT a.bundle_id, level, key, day, NULL, " COUNTS("rl.n", "rl.ms") ","
	 " format('%s + %s reports, %s + %s ms', coalesce(gn, 0), coalesce(dn, 0),"
	 " coalesce(gms, 0), coalesce(dms, 0))"
	 " FROM g FULL JOIN wl USING (app_id, level, key, day)"
	 " FULL JOIN rl USING (app_id, level, key, day) JOIN apps a ON a.id = app_id"
	 " WHERE coalesce(gn, 0) + coalesce(dn, 0) <> coalesce(rl.n, 0)"
	 " OR coalesce(gms, 0) + coalesce(dms, 0) <> coalesce(rl.ms, 0)"
	 " ORDER BY 1, 2, 3, 4", 1}},
	{"call tree", "the day's reports of the version", "group_stack_days + unfolded deltas",
	 false, {"check_tree",
	 "WITH " PARTS ","
	 /* An Android stack's durations (schema/051), in total: only the
	  * skeleton of a report that has them is parsed. */
	 " r AS (SELECT app_id, key1, key2, received_day AS day,"
	 " coalesce(app_version, '') AS app_version, count(*) AS n,"
	 " sum(CASE WHEN strpos(symbolized, '\"java_ms\"') > 0 THEN (SELECT sum(v::bigint)"
	 " FROM jsonb_array_elements_text((replace(symbolized, chr(1), '0')::jsonb)"
	 "->'stack'->'java_ms') AS e(v)) END) AS ms FROM reports"
	 " WHERE " APP("app_id") " GROUP BY 1, 2, 3, 4, 5),"
	 /* A delta without a stack (written before schema/042) was counted
	  * in the tree by its ingest. */
	 " w AS (SELECT d.app_id, d.key1, d.key2, d.day, d.app_version, count(*) AS dn,"
	 " sum((SELECT sum(v) FROM unnest(d.stack_ms) AS v)) AS dms"
	 " FROM group_deltas d JOIN parts p ON p.app_id = d.app_id AND p.day = d.day"
	 " WHERE d.stack IS NOT NULL AND " APP("d.app_id") " GROUP BY 1, 2, 3, 4, 5),"
	 " t AS (SELECT t.app_id, t.key1, t.key2, t.day, t.app_version, sum(t.reports) AS tn,"
	 " sum((SELECT sum(v) FROM unnest(t.ms) AS v)) AS tms"
	 " FROM group_stack_days t JOIN parts p ON p.app_id = t.app_id AND p.day = t.day"
	 " WHERE " APP("t.app_id") " GROUP BY 1, 2, 3, 4, 5)"
	 " SELECT a.bundle_id, 2, key2, day,"
	 " format('under level-1 group %s, version ''%s''', key1, app_version),"
	 " format('%s reports', coalesce(r.n, 0))"
	 " || CASE WHEN coalesce(r.ms, tms, dms) IS NOT NULL"
	 " THEN format(', %s ms', coalesce(r.ms, 0)) ELSE '' END,"
	 " format('%s + %s reports', coalesce(tn, 0), coalesce(dn, 0))"
	 " || CASE WHEN coalesce(r.ms, tms, dms) IS NOT NULL"
	 " THEN format(', %s + %s ms', coalesce(tms, 0), coalesce(dms, 0)) ELSE '' END"
	 " FROM t FULL JOIN w USING (app_id, key1, key2, day, app_version)"
	 " FULL JOIN r USING (app_id, key1, key2, day, app_version) JOIN apps a ON a.id = app_id"
	 " WHERE coalesce(tn, 0) + coalesce(dn, 0) <> coalesce(r.n, 0)"
	 " OR coalesce(tms, 0) + coalesce(dms, 0) <> coalesce(r.ms, 0)"
	 " ORDER BY 1, 3, 4, 5", 1}},
	{"pick lists", "the day's reports", "app_dimensions + unfolded deltas", false,
	 {"check_dimensions",
	 "WITH " PARTS ","
	 " r0 AS (SELECT app_id, received_day AS day, coalesce(app_version, '') AS v,"
	 " coalesce(os_version, '') AS o, coalesce(device, '') AS dv, kind, count(*) AS n"
	 " FROM reports WHERE " APP("app_id") " GROUP BY 1, 2, 3, 4, 5, 6),"
	 " w0 AS (SELECT d.app_id, d.day, d.app_version AS v, d.os_version AS o, d.device AS dv,"
	 " d.kind, count(*) AS n FROM group_deltas d"
	 " JOIN parts p ON p.app_id = d.app_id AND p.day = d.day"
	 " WHERE " APP("d.app_id") " GROUP BY 1, 2, 3, 4, 5, 6),"
	 " r AS (SELECT app_id, day, x.dim, x.value, sum(n) AS n FROM r0, LATERAL (VALUES"
	 " ('version', v), ('os_version', o), ('device', dv), ('kind', kind)) AS x(dim, value)"
	 " GROUP BY 1, 2, 3, 4),"
	 " w AS (SELECT app_id, day, x.dim, x.value, sum(n) AS dn FROM w0, LATERAL (VALUES"
	 " ('version', v), ('os_version', o), ('device', dv), ('kind', kind)) AS x(dim, value)"
	 " GROUP BY 1, 2, 3, 4),"
	 " m AS (SELECT d.app_id, d.day, d.dim, d.value, d.reports AS mn FROM app_dimensions d"
	 " JOIN parts p ON p.app_id = d.app_id AND p.day = d.day WHERE " APP("d.app_id") ")"
	 " SELECT a.bundle_id, NULL::int, NULL, day, format('%s ''%s''', dim, value),"
	 " format('%s reports', coalesce(r.n, 0)),"
	 " format('%s + %s reports', coalesce(mn, 0), coalesce(dn, 0))"
	 " FROM m FULL JOIN w USING (app_id, day, dim, value)"
	 " FULL JOIN r USING (app_id, day, dim, value) JOIN apps a ON a.id = app_id"
	 " WHERE coalesce(mn, 0) + coalesce(dn, 0) <> coalesce(r.n, 0) ORDER BY 1, 4, 5", 1}},
	{"report keys", "report_keys", "reports", false, {"check_report_keys",
	 "WITH " PARTS ","
	 " k AS (SELECT k.app_id, k.report_id, k.id, k.received_day FROM report_keys k"
	 " JOIN parts p ON p.app_id = k.app_id AND p.day = k.received_day"
	 " WHERE " APP("k.app_id") "),"
	 " r AS (SELECT app_id, report_id, id, received_day FROM reports WHERE " APP("app_id") ")"
	 " SELECT a.bundle_id, NULL::int, NULL, coalesce(r.received_day, k.received_day),"
	 " format('report %s', coalesce(r.id, k.id)),"
	 " CASE WHEN k.id IS NULL THEN 'no row' ELSE format('app %s, report_id %s, day %s',"
	 " k.app_id, k.report_id, k.received_day) END,"
	 " CASE WHEN r.id IS NULL THEN 'no row' ELSE format('app %s, report_id %s, day %s',"
	 " r.app_id, r.report_id, r.received_day) END"
	 " FROM k FULL JOIN r USING (id) JOIN apps a ON a.id = coalesce(r.app_id, k.app_id)"
	 " WHERE (k.app_id, k.report_id, k.received_day)"
	 " IS DISTINCT FROM (r.app_id, r.report_id, r.received_day) ORDER BY 1, 5", 1}},
	{"quota counts", "the day's reports of the user in the sample", "user_quota", false,
	 {"check_quota",
	 "WITH " PARTS ","
	 " q AS (SELECT q.app_id, q.day, q.user_id, q.reports AS qn FROM user_quota q"
	 " JOIN parts p ON p.app_id = q.app_id AND p.day = q.day WHERE " APP("q.app_id") "),"
	 /* Whitelisted users' reports are not counted (ingest_reports). */
	 " r AS (SELECT app_id, received_day AS day, user_id, count(*) AS n FROM reports"
	 " WHERE in_sample AND " APP("app_id") " GROUP BY 1, 2, 3)"
	 " SELECT a.bundle_id, NULL::int, NULL, day, format('user %s', user_id),"
	 " format('%s reports', coalesce(n, 0)), format('%s reports', coalesce(qn, 0))"
	 " FROM q FULL JOIN r USING (app_id, day, user_id) JOIN apps a ON a.id = app_id"
	 " WHERE coalesce(qn, 0) <> coalesce(n, 0) ORDER BY 1, 4, 5", 1}},
	{"image waits", "the day's reports waiting", "image_waits", false, {"check_waits",
	 "WITH " PARTS ","
	 /* The reports' distinct waits first: most reports wait for the same
	  * few images (1.2 against 5 s at 1,000,000 reports). */
	 " g AS (SELECT app_id, received_day AS day, waits, wait_reasons, count(*) AS n"
	 " FROM reports WHERE waits IS NOT NULL AND " APP("app_id") " GROUP BY 1, 2, 3, 4),"
	 " w AS (SELECT app_id, day, stack_at(waits, i) AS uuid,"
	 " wait_reason(substr(wait_reasons, i, 1)) AS reason, sum(n) AS n"
	 " FROM g, generate_series(1, length(waits) / 16) AS i GROUP BY 1, 2, 3, 4),"
	 " c AS (SELECT c.app_id, c.day, c.uuid, c.reason, c.reports AS cn FROM image_waits c"
	 " JOIN parts p ON p.app_id = c.app_id AND p.day = c.day WHERE " APP("c.app_id") ")"
	 " SELECT a.bundle_id, NULL::int, NULL, day,"
	 " format('image %s, %s', upper(uuid::text), reason),"
	 " format('%s reports', coalesce(n, 0)), format('%s reports', coalesce(cn, 0))"
	 " FROM c FULL JOIN w USING (app_id, day, uuid, reason) JOIN apps a ON a.id = app_id"
	 " WHERE coalesce(cn, 0) <> coalesce(n, 0) ORDER BY 1, 4, 5", 1}},
	{"stacks", "a stacks row kept to the referrer's day", "stacks", false, {"check_stacks",
	 /* The reports' distinct lists of hashes first, as the waits
	  * (1.6 against 4.6 s at 1,000,000 reports). */
	 "WITH g AS (SELECT app_id, raw_stacks || symbolized_stacks AS hashes,"
	 " max(received_day) AS day, count(*) AS n FROM reports WHERE " APP("app_id")
	 " GROUP BY 1, 2),"
	 " refs AS (SELECT app_id, stack_at(hashes, i) AS hash, 'report references' AS src,"
	 " max(day) AS day, sum(n) AS n"
	 " FROM g, generate_series(1, length(hashes) / 16) AS i GROUP BY 1, 2"
	 /* Frames held inline and the lost stack (nil) have no stacks row. */
	 " UNION ALL SELECT app_id, stack, 'group_stack_days rows', max(day), count(*)"
	 " FROM group_stack_days WHERE frames IS NULL AND stack <> " NIL_STACK
	 " AND " APP("app_id") " GROUP BY 1, 2"
	 " UNION ALL SELECT app_id, stack, 'deltas', max(day), count(*) FROM group_deltas"
	 " WHERE stack_frames IS NULL AND stack <> " NIL_STACK
	 " AND " APP("app_id") " GROUP BY 1, 2)"
	 " SELECT a.bundle_id, NULL::int, NULL, refs.day,"
	 " format('stack %s of %s %s, the latest of that day', refs.hash, refs.n, refs.src),"
	 " format('kept to %s or later', refs.day),"
	 " CASE WHEN s.hash IS NULL THEN 'no row' ELSE format('kept to %s', s.last_day) END"
	 " FROM refs JOIN apps a ON a.id = refs.app_id"
	 " LEFT JOIN stacks s ON s.app_id = refs.app_id AND s.hash = refs.hash"
	 " WHERE s.hash IS NULL OR s.last_day < refs.day ORDER BY 1, 4, 5", 1}},
	{"partitions", "the day's reports partition", "the partitions", false, {"check_partitions",
	 "WITH " PARTS ","
	 " used AS (SELECT app_id, received_day AS day, 'report_keys' AS tbl, count(*) AS n"
	 " FROM report_keys WHERE " APP("app_id") " GROUP BY 1, 2"
	 " UNION ALL SELECT app_id, day, 'user_quota', count(*) FROM user_quota"
	 " WHERE " APP("app_id") " GROUP BY 1, 2"
	 " UNION ALL SELECT app_id, day, 'image_waits', count(*) FROM image_waits"
	 " WHERE " APP("app_id") " GROUP BY 1, 2"
	 " UNION ALL SELECT app_id, day, 'group_stack_days', count(*) FROM group_stack_days"
	 " WHERE " APP("app_id") " GROUP BY 1, 2)"
	 " SELECT a.bundle_id, NULL::int, NULL, u.day, format('%s rows of %s', u.n, u.tbl),"
	 " format('reports_a%s_%s', u.app_id, to_char(u.day, 'YYYYMMDD')), 'none'"
	 " FROM used u JOIN apps a ON a.id = u.app_id"
	 " WHERE NOT EXISTS (SELECT 1 FROM parts p WHERE p.app_id = u.app_id AND p.day = u.day)"
	 " ORDER BY 1, 4, 5", 1}},
	/* Retention runs daily (and at `stallscope purge`): until then a
	 * day past it, or many after retention_days was lowered, is still
	 * there, and every equality above still holds. */
	{"retention", "none before the oldest day kept", "day partitions", true,
	 {"check_retention",
	 "WITH " PARTS ","
	 " keep AS (SELECT a.id AS app_id, a.bundle_id, coalesce(c.retention_days,"
	 " (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute t"
	 " ON t.attrelid = d.adrelid AND t.attnum = d.adnum"
	 " WHERE d.adrelid = 'app_config'::regclass AND t.attname = 'retention_days')::int)"
	 " AS days FROM apps a LEFT JOIN app_config c ON c.app_id = a.id"
	 " WHERE " APP("a.id") ")"
	 " SELECT k.bundle_id, NULL::int, NULL, min(p.day),"
	 " format('%s days kept; the purge has yet to drop these', k.days),"
	 " format('none before %s', (now() AT TIME ZONE 'UTC')::date - (k.days - 1)),"
	 " format('%s partitions, the oldest of %s', count(*), min(p.day))"
	 " FROM parts p JOIN keep k ON k.app_id = p.app_id"
	 " WHERE p.day < (now() AT TIME ZONE 'UTC')::date - (k.days - 1)"
	 " GROUP BY k.bundle_id, k.days ORDER BY 1", 1}},
};
/* clang-format on */

typedef struct run_state {
	const st_check_sink *sink;
	const check *check;
	int64_t app_id;
} run_state;

static int read_row(void *cls, const st_row *row)
{
	const run_state *s = cls;
	st_check_row r = {
		.check = s->check->name,
		.expected_as = s->check->expected_as,
		.found_as = s->check->found_as,
		.note = s->check->note,
		.app = st_row_text(row, 0),
		.level = st_row_int64(row, 1),
		.key = st_row_text(row, 2),
		.day = st_row_text(row, 3),
		.detail = st_row_text(row, 4),
		.expected = st_row_text(row, 5),
		.found = st_row_text(row, 6),
	};
	s->sink->row(s->sink->cls, &r);
	return 0;
}

static int run_checks(st_conn *c, void *cls)
{
	run_state *s = cls;
	/* Before the first statement, so the snapshot is taken after the
	 * lock: a partition dropped meanwhile cannot hide rows that the
	 * snapshot still counts elsewhere. No JIT: the estimates of a
	 * generate_series per report (1,000 rows each) made PostgreSQL
	 * compile the scans, 5.6 of a statement's 10.7 s at 1,000,000
	 * reports. The sorts and hashes get what a filtered list gets
	 * (store/groups.c); a bigger one spills to disk. */
	int rc = st_exec_script(c,
				"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY;"
				" LOCK TABLE reports IN ACCESS SHARE MODE;"
				" SET LOCAL work_mem = '64MB'; SET LOCAL jit = off",
				"check_begin");
	if (rc < 0)
		return rc;
	s->sink->restart(s->sink->cls);
	int64_t total = 0;
	const st_param app = s->app_id ? ST_INT64(s->app_id) : (st_param){ST_PARAM_NULL, 0, 0, 0};
	for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
		s->check = &checks[i];
		rc = st_exec(c, &checks[i].stmt, &app, 1, read_row, s);
		if (rc < 0)
			return rc;
		s->sink->done(s->sink->cls, checks[i].name, rc);
		if (!checks[i].note)
			total += rc;
	}
	return total > INT32_MAX ? INT32_MAX : (int)total;
}

int st_check_run(int64_t app_id, const st_check_sink *sink)
{
	run_state s = {sink, NULL, app_id};
	return st_run_tx("check", run_checks, &s);
}

typedef struct app_query {
	const char *bundle_id;
	int64_t id;
} app_query;

static int read_app_id(st_conn *c, void *cls)
{
	static const st_stmt q = {"check_app_id", "SELECT id FROM apps WHERE bundle_id = $1", 1};
	app_query *a = cls;
	return ST_EXEC(c, &q, st_read_int64, &a->id, ST_TEXT(a->bundle_id));
}

int st_check_app_id(const char *bundle_id, int64_t *out_id)
{
	app_query q = {bundle_id, 0};
	int rc = st_run_autocommit("check_app_id", read_app_id, &q);
	*out_id = q.id;
	return rc;
}
