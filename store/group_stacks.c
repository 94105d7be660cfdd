/*
 * group_stacks.c — see group_stacks.h. Under the filters the dashboard
 * uses (days, version, level-2 group) the counts come from
 * group_stack_days (schema/024), counted by the fold from ingest's deltas
 * (schema/042; the route folds first) and kept by reprocessing and
 * retention: a few hundred rows for a group of 100,000 reports. Under an
 * OS version, device or kind filter, which that table does not split by,
 * the matching report rows are read instead: a row keeps its symbolized
 * document as a skeleton with one 0x01 byte per stack (schema/018), whose
 * "stack" says which thread is the representative stack (its stack is
 * then the thread's, whose hash is the row's symbolized_stacks entry after
 * the images') or holds the frames itself (a stack taken from samples).
 * Replacing each 0x01 byte by a number makes the skeleton JSON. An
 * Android stack's durations are summed per frame beside the count
 * (schema/051: ms_sum), from the rows or from the skeletons' "java_ms".
 */
#include "store/group_stacks.h"
#include "store/internal.h"

#define STR_(x) #x
#define STR(x)	STR_(x)

typedef struct walk {
	st_stack_cb cb;
	void *cls;
} walk;

static int read_stack(void *cls, const st_row *row)
{
	walk *w = cls;
	return w->cb(w->cls, st_row_int64(row, 0), st_row_text(row, 1), st_row_text(row, 2));
}

/* clang-format off */
/* A thread's stack by its hash; frames held inline are the row's own; the
 * nil stack (lost) finds no row and comes as NULL. */
static const st_stmt open_counted = {
	"group_stacks_open_counted",
	"DECLARE st_group_stacks NO SCROLL CURSOR FOR"
	" SELECT g.n, CASE WHEN g.frames IS NULL THEN (SELECT s.body FROM stacks s"
	"  WHERE s.app_id = $1 AND s.hash = g.stack) ELSE g.frames END, array_to_json(g.ms)::text"
	" FROM (SELECT d.stack, min(d.frames) AS frames, sum(d.reports)::bigint AS n,"
	"  ms_sum(jsonb_agg(d.ms)) AS ms"
	"  FROM group_stack_days d"
	"  WHERE d.app_id = $1 AND d.key1 = $2 AND ($3::text IS NULL OR d.key2 = $3)"
	"  AND ($4::date IS NULL OR d.day >= $4::date)"
	"  AND ($5::date IS NULL OR d.day <= $5::date)"
	"  AND ($6::text IS NULL OR d.app_version = $6)"
	"  GROUP BY d.stack) AS g"
	" ORDER BY g.n DESC, g.stack",
	6};
/* Each skeleton parsed once (MATERIALIZED): inlined, the planner repeated
 * the parse for every expression that reads it, 2.5 times the cost
 * (docs/STORAGE.md "Reading"). */
static const st_stmt open_scan = {
	"group_stacks_open_scan",
	"DECLARE st_group_stacks NO SCROLL CURSOR FOR"
	" WITH x AS MATERIALIZED (SELECT r.symbolized_stacks AS h,"
	"  (replace(r.symbolized, chr(1), '0')::jsonb)->'stack' AS st"
	"  FROM reports r"
	"  WHERE r.app_id = $1 AND group_key_hash(r.key1) = group_key_hash($2) AND r.key1 = $2"
	"  AND ($3::text IS NULL OR r.key2 = $3)"
	"  AND ($4::date IS NULL OR r.received_day >= $4::date)"
	"  AND ($5::date IS NULL OR r.received_day <= $5::date)"
	"  AND ($6::text IS NULL OR coalesce(r.app_version, '') = $6)"
	"  AND ($7::text IS NULL OR coalesce(r.os_version, '') = $7)"
	"  AND ($8::text IS NULL OR coalesce(r.device, '') = $8)"
	"  AND ($9::text IS NULL OR r.kind = $9)),"
	" rep AS (SELECT CASE WHEN st ? 'thread' THEN stack_at(h, (st->>'thread')::int + 2) END"
	" AS hash,"
	"  CASE WHEN st ? 'thread' THEN NULL ELSE st->'frames' END AS frames,"
	"  st->'java_ms' AS ms FROM x)"
	" SELECT g.n, coalesce((SELECT s.body FROM stacks s"
	"  WHERE s.app_id = $1 AND s.hash = g.hash), g.frames::text), array_to_json(g.ms)::text"
	" FROM (SELECT hash, frames, count(*) AS n,"
	"  ms_sum(jsonb_agg(ms)) AS ms"
	"  FROM rep GROUP BY hash, frames) AS g"
	" ORDER BY g.n DESC, g.hash, g.frames::text",
	9};
/* clang-format on */

/* The aggregate answers every filter it is split by; another filter needs
 * the reports' own columns. */
static int open_cursor(st_conn *c, int64_t app_id, const char *key1, const char *key2,
		       const st_group_filter *f)
{
	if (!f->os_version && !f->device && !f->kind)
		return ST_EXEC(c, &open_counted, NULL, NULL, ST_INT64(app_id), ST_TEXT(key1),
			       ST_TEXT(key2), ST_TEXT(f->from), ST_TEXT(f->to),
			       ST_TEXT(f->version));
	return ST_EXEC(c, &open_scan, NULL, NULL, ST_INT64(app_id), ST_TEXT(key1), ST_TEXT(key2),
		       ST_TEXT(f->from), ST_TEXT(f->to), ST_TEXT(f->version),
		       ST_TEXT(f->os_version), ST_TEXT(f->device), ST_TEXT(f->kind));
}

int st_group_stacks(st_conn *c, int64_t app_id, const char *key1, const char *key2,
		    const st_group_filter *f, st_stack_cb cb, void *cls)
{
	static const st_stmt known = {
		"group_stacks_known",
		"SELECT 1 FROM groups WHERE app_id = $1 AND level = 1 AND key = $2 AND reports > 0",
		2};
	static const st_stmt fetch = {"group_stacks_fetch",
				      "FETCH " STR(ST_STACK_BATCH) " FROM st_group_stacks", 0};
	static const st_stmt close_stmt = {"group_stacks_close", "CLOSE st_group_stacks", 0};
	int rc = ST_EXEC(c, &known, NULL, NULL, ST_INT64(app_id), ST_TEXT(key1));
	if (rc <= 0)
		return rc;
	/* Planned for these filters: a generic plan keeps every "IS NULL OR"
	 * branch and loses the index conditions (store/groups.c). */
	rc = st_exec_script(c, "SET LOCAL plan_cache_mode = force_custom_plan", "group_stacks");
	if (rc >= 0)
		rc = open_cursor(c, app_id, key1, key2, f);
	walk w = {cb, cls};
	while (rc >= 0 && (rc = st_exec(c, &fetch, NULL, 0, read_stack, &w)) == ST_STACK_BATCH)
		;
	if (rc >= 0)
		rc = st_exec(c, &close_stmt, NULL, 0, NULL, NULL);
	return rc < 0 ? rc : 1;
}
