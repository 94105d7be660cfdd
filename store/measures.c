/* measures.c — see measures.h and schema/050_android_measures.sql. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/measures.h"

/* The arrays the commit statement takes after (app, day). */
enum {
	C_KEY,
	C_KIND,
	C_VERSION,
	C_WARM,
	C_STARTUP,
	C_APP_CREATE,
	C_FIRST_ACTIVITY,
	C_SCENE,
	C_LEVEL,
	C_SUM = C_LEVEL + ST_DROP_LEVELS,
	C_FPS = C_SUM + ST_DROP_LEVELS,
	NCOLUMNS
};

/* Room for an int64 or a %.17g double as text. */
#define NUM_LEN 32

/* A figure of one element is at most this (measures.h says why). */
#define FIGURE_MAX INT32_MAX
#define FPS_MAX	   1000.0

static const char *int_text(int64_t v, char *tmp)
{
	snprintf(tmp, NUM_LEN, "%lld", (long long)(v > FIGURE_MAX ? FIGURE_MAX : v));
	return tmp;
}

static const char *startup_text(const st_measure *m, size_t col, char *tmp)
{
	switch (col) {
	case C_WARM: return m->warm ? "t" : "f";
	case C_STARTUP: return int_text(m->startup_ms, tmp);
	case C_APP_CREATE: return int_text(m->application_create_ms, tmp);
	case C_FIRST_ACTIVITY: return int_text(m->first_activity_create_ms, tmp);
	}
	return NULL;
}

static const char *frames_text(const st_measure *m, size_t col, char *tmp)
{
	if (col == C_SCENE)
		return m->scene ? m->scene : "";
	if (col >= C_LEVEL && col < C_SUM)
		return int_text(m->drop_level[col - C_LEVEL], tmp);
	if (col >= C_SUM && col < C_FPS)
		return int_text(m->drop_sum[col - C_SUM], tmp);
	if (col == C_FPS && isfinite(m->fps) && m->fps >= 0 && m->fps <= FPS_MAX) {
		snprintf(tmp, NUM_LEN, "%.17g", m->fps);
		return tmp;
	}
	return NULL;
}

/* Column COL of M as text (NULL for SQL NULL); numbers are written into
 * TMP (NUM_LEN bytes). */
static const char *column_text(const st_measure *m, size_t col, char *tmp)
{
	switch (col) {
	case C_KEY: return m->key;
	case C_KIND: return m->kind == ST_MEASURE_STARTUP ? "startup" : "frames";
	case C_VERSION: return m->app_version ? m->app_version : "";
	}
	return m->kind == ST_MEASURE_STARTUP ? startup_text(m, col, tmp) : frames_text(m, col, tmp);
}

/* clang-format off */
/* One statement: the batch's first element of each key is inserted into
 * measure_keys, and those whose key was new add to the aggregates. Locks
 * are taken in one order (keys, then startup rows, then frame rows, each
 * sorted), so two batches never deadlock. It returns the new elements'
 * ordinals. */
#define FRAME_SUMS(F)                                                                  \
	F "_best = d." F "_best + excluded." F "_best, "                               \
	F "_normal = d." F "_normal + excluded." F "_normal, "                         \
	F "_middle = d." F "_middle + excluded." F "_middle, "                         \
	F "_high = d." F "_high + excluded." F "_high, "                               \
	F "_frozen = d." F "_frozen + excluded." F "_frozen"
static const st_stmt commit_stmt = {
	"measures_commit",
	"WITH u AS (SELECT * FROM unnest($3::text[], $4::text[], $5::text[],"
	"  $6::text[]::boolean[], $7::text[]::bigint[], $8::text[]::bigint[], $9::text[]::bigint[],"
	"  $10::text[], $11::text[]::bigint[], $12::text[]::bigint[], $13::text[]::bigint[],"
	"  $14::text[]::bigint[], $15::text[]::bigint[], $16::text[]::bigint[], $17::text[]::bigint[],"
	"  $18::text[]::bigint[], $19::text[]::bigint[], $20::text[]::bigint[],"
	"  $21::text[]::float8[]) WITH ORDINALITY AS u(key, kind, version, warm, ms, app_ms, act_ms,"
	"  scene, l0, l1, l2, l3, l4, s0, s1, s2, s3, s4, fps, i)),"
	" once AS (SELECT DISTINCT ON (key) * FROM u ORDER BY key, i),"
	" added AS (INSERT INTO measure_keys (app_id, key, day)"
	"  SELECT $1, key, $2::date FROM once ORDER BY key ON CONFLICT DO NOTHING RETURNING key),"
	" fresh AS (SELECT f.* FROM once f JOIN added USING (key)),"
	" startups AS (INSERT INTO startup_days AS d (app_id, day, app_version, warm, startups,"
	"  startup_ms, max_ms, duration_fine, application_creates, application_create_ms,"
	"  first_activity_creates, first_activity_create_ms)"
	"  SELECT $1, $2::date, version, warm, count(*), sum(ms), max(ms),"
	"   fine_hist_of(array_agg(ms), 1),"
	"   count(*) FILTER (WHERE NOT warm AND app_ms >= 0),"
	"   coalesce(sum(app_ms) FILTER (WHERE NOT warm AND app_ms >= 0), 0),"
	"   count(*) FILTER (WHERE NOT warm AND act_ms >= 0),"
	"   coalesce(sum(act_ms) FILTER (WHERE NOT warm AND act_ms >= 0), 0)"
	"  FROM fresh WHERE kind = 'startup' AND ms >= 0"
	"  GROUP BY version, warm ORDER BY version COLLATE \"C\", warm"
	"  ON CONFLICT (app_id, day, app_version, warm) DO UPDATE SET"
	"  startups = d.startups + excluded.startups, startup_ms = d.startup_ms + excluded.startup_ms,"
	"  max_ms = greatest(d.max_ms, excluded.max_ms),"
	"  duration_fine = fine_hist_add(d.duration_fine, excluded.duration_fine),"
	"  application_creates = d.application_creates + excluded.application_creates,"
	"  application_create_ms = d.application_create_ms + excluded.application_create_ms,"
	"  first_activity_creates = d.first_activity_creates + excluded.first_activity_creates,"
	"  first_activity_create_ms = d.first_activity_create_ms + excluded.first_activity_create_ms),"
	" frames AS (INSERT INTO frame_days AS d (app_id, day, app_version, scene, elements,"
	"  frames_best, frames_normal, frames_middle, frames_high, frames_frozen, dropped_best,"
	"  dropped_normal, dropped_middle, dropped_high, dropped_frozen, fps_sum, fps_count)"
	"  SELECT $1, $2::date, version, scene, count(*), sum(greatest(l0, 0)), sum(greatest(l1, 0)),"
	"   sum(greatest(l2, 0)), sum(greatest(l3, 0)), sum(greatest(l4, 0)), sum(greatest(s0, 0)),"
	"   sum(greatest(s1, 0)), sum(greatest(s2, 0)), sum(greatest(s3, 0)), sum(greatest(s4, 0)),"
	"   coalesce(sum(fps), 0), count(fps)"
	"  FROM fresh WHERE kind = 'frames'"
	"  GROUP BY version, scene ORDER BY version COLLATE \"C\", scene COLLATE \"C\""
	"  ON CONFLICT (app_id, day, app_version, scene) DO UPDATE SET"
	"  elements = d.elements + excluded.elements, " FRAME_SUMS("frames") ", "
	FRAME_SUMS("dropped") ", fps_sum = d.fps_sum + excluded.fps_sum,"
	"  fps_count = d.fps_count + excluded.fps_count)"
	" SELECT i FROM fresh",
	2 + NCOLUMNS};
/* clang-format on */

/* The rows of the commit statement: the new elements' ordinals. */
typedef struct fresh_rows {
	bool *stored;
	size_t n;
} fresh_rows;

static int read_fresh(void *cls, const st_row *row)
{
	fresh_rows *f = cls;
	int64_t i = st_row_int64(row, 0);
	if (i < 1 || (uint64_t)i > f->n)
		return -1;
	f->stored[i - 1] = true;
	return 0;
}

/* The NCOLUMNS arrays of M[0..N) into ARRAYS (freed by the caller). 0, or
 * ST_HARD_ERROR. */
static int commit_arrays(const st_measure *const *m, size_t n, cm_buf *arrays)
{
	const char **items = calloc(n, sizeof *items);
	char *tmp = calloc(n, NUM_LEN);
	int rc = items && tmp ? 0 : ST_HARD_ERROR;
	for (size_t col = 0; rc == 0 && col < NCOLUMNS; col++) {
		for (size_t i = 0; i < n; i++)
			items[i] = column_text(m[i], col, tmp + i * NUM_LEN);
		st_wire_text_array(&arrays[col], items, NULL, n);
		if (arrays[col].failed)
			rc = ST_HARD_ERROR;
	}
	free(items);
	free(tmp);
	return rc;
}

int st_measures_add(st_conn *c, int64_t app_id, const char *day, const st_measure *const *m,
		    size_t n, bool *stored)
{
	if (n == 0)
		return 1;
	if (n > INT32_MAX)
		return ST_HARD_ERROR;
	for (size_t i = 0; i < n; i++)
		if (!m[i]->key ||
		    (m[i]->kind != ST_MEASURE_STARTUP && m[i]->kind != ST_MEASURE_FRAMES))
			return ST_HARD_ERROR;
	cm_buf arrays[NCOLUMNS];
	memset(arrays, 0, sizeof arrays);
	st_param params[2 + NCOLUMNS] = {ST_INT64(app_id), ST_TEXT(day)};
	int rc = commit_arrays(m, n, arrays);
	if (rc == 0) {
		for (size_t col = 0; col < NCOLUMNS; col++)
			params[2 + col] = ST_BYTES(arrays[col].data, arrays[col].len);
		memset(stored, 0, n * sizeof *stored);
		fresh_rows f = {stored, n};
		rc = st_exec(c, &commit_stmt, params, 2 + NCOLUMNS, read_fresh, &f);
	}
	for (size_t col = 0; col < NCOLUMNS; col++)
		free(arrays[col].data);
	return rc < 0 ? rc : 1;
}

typedef struct commit_tx {
	int64_t app_id;
	const char *day;
	const st_measure *const *m;
	size_t n;
	bool *fresh; /* this attempt's answer */
} commit_tx;

static int commit_cb(st_conn *c, void *cls)
{
	commit_tx *t = cls;
	return st_measures_add(c, t->app_id, t->day, t->m, t->n, t->fresh);
}

int st_measures_commit(int64_t app_id, const char *day, const st_measure *const *m, size_t n,
		       bool *stored)
{
	if (n == 0)
		return 1;
	commit_tx t = {app_id, day, m, n, calloc(n, sizeof(bool))};
	int rc = t.fresh ? st_run_tx("measures_commit", commit_cb, &t) : ST_HARD_ERROR;
	if (rc >= 0)
		memcpy(stored, t.fresh, n * sizeof *stored);
	free(t.fresh);
	return rc;
}

/* clang-format off */
/* A side of a startup reply, from a row S of the sums (g below) and its
 * percentiles PCT; EMPTY_SIDE when there were no startups. */
#define SIDE(S)                                                                          \
	"json_build_object('count', " S ".startups, 'p50_ms', " S ".pct->'p50_ms',"     \
	" 'p90_ms', " S ".pct->'p90_ms',"                                                \
	" 'mean_ms', " S ".startup_ms::float8 / " S ".startups::float8,"                 \
	" 'max_ms', " S ".max_ms,"                                                       \
	" 'application_create_mean_ms', " S ".ac_ms::float8 / nullif(" S ".ac, 0)::float8," \
	" 'first_activity_create_mean_ms', " S ".fa_ms::float8 / nullif(" S ".fa, 0)::float8)"
#define EMPTY_SIDE                                                                       \
	"json_build_object('count', 0, 'p50_ms', NULL, 'p90_ms', NULL, 'mean_ms', NULL,"   \
	" 'max_ms', NULL, 'application_create_mean_ms', NULL,"                            \
	" 'first_activity_create_mean_ms', NULL)"
/* The same day, version and side: DAY NULL is the version's whole range. */
#define SAME(A, B) A ".day IS NOT DISTINCT FROM " B ".day AND " A ".app_version = " B ".app_version"
#define VERSION_ORDER(A) "app_version_key(" A ".app_version, NULL), " A ".app_version COLLATE \"C\""
/* clang-format on */

/* clang-format off */
int st_startup_read(st_conn *c, int64_t app_id, const st_measures_filter *f, char **out_json)
{
	/* Sums and histogram pairs per (day, version, side) and per
	 * (version, side) over the range (day NULL): days are NOT NULL, so
	 * the grouping sets cannot be confused. */
	static const st_stmt q = {
		"startup_read",
		"WITH r AS (SELECT * FROM startup_days s WHERE s.app_id = $1"
		"  AND ($2::date IS NULL OR s.day >= $2::date)"
		"  AND ($3::date IS NULL OR s.day <= $3::date)"
		"  AND ($4::text IS NULL OR s.app_version = $4)),"
		" g AS (SELECT r.day, r.app_version, r.warm, sum(r.startups) AS startups,"
		"  sum(r.startup_ms) AS startup_ms, max(r.max_ms) AS max_ms,"
		"  sum(r.application_creates) AS ac, sum(r.application_create_ms) AS ac_ms,"
		"  sum(r.first_activity_creates) AS fa, sum(r.first_activity_create_ms) AS fa_ms"
		"  FROM r GROUP BY GROUPING SETS ((r.day, r.app_version, r.warm),"
		"  (r.app_version, r.warm))),"
		" p AS (SELECT r.day, r.app_version, r.warm, array_agg(x.bucket) AS buckets,"
		"  array_agg(x.n) AS ns FROM r, fine_pairs(r.duration_fine) x"
		"  GROUP BY GROUPING SETS ((r.day, r.app_version, r.warm),"
		"  (r.app_version, r.warm))),"
		" s AS (SELECT g.*, fine_percentiles(p.buckets, p.ns, g.max_ms) AS pct"
		"  FROM g LEFT JOIN p ON " SAME("p", "g") " AND p.warm = g.warm),"
		" k AS (SELECT DISTINCT day, app_version FROM s),"
		" o AS (SELECT k.day, k.app_version,"
		"  CASE WHEN c.startups IS NULL THEN " EMPTY_SIDE " ELSE " SIDE("c") " END AS cold,"
		"  CASE WHEN w.startups IS NULL THEN " EMPTY_SIDE " ELSE " SIDE("w") " END AS warm"
		"  FROM k LEFT JOIN s c ON " SAME("c", "k") " AND NOT c.warm"
		"  LEFT JOIN s w ON " SAME("w", "k") " AND w.warm)"
		" SELECT json_build_object('versions', coalesce((SELECT json_agg(json_build_object("
		"  'app_version', o.app_version, 'cold', o.cold, 'warm', o.warm)"
		"  ORDER BY " VERSION_ORDER("o") ") FROM o WHERE o.day IS NULL), '[]'),"
		" 'days', coalesce((SELECT json_agg(json_build_object('day', o.day,"
		"  'app_version', o.app_version, 'cold', o.cold, 'warm', o.warm)"
		"  ORDER BY o.day, " VERSION_ORDER("o") ") FROM o WHERE o.day IS NOT NULL), '[]'))::text",
		4};
	return st_run_text(c, &q,
			   (const st_param[]){ST_INT64(app_id), ST_TEXT(f->from), ST_TEXT(f->to),
					      ST_TEXT(f->version)},
			   4, out_json);
}
/* clang-format on */

/* clang-format off */
#define LEVELS(P)                                                                     \
	"json_build_object('best', " P "_best, 'normal', " P "_normal, 'middle', " P    \
	"_middle, 'high', " P "_high, 'frozen', " P "_frozen)"
/* clang-format on */

/* clang-format off */
int st_frames_read(st_conn *c, int64_t app_id, const st_measures_filter *f, char **out_json)
{
	static const st_stmt q = {
		"frames_read",
		"SELECT json_build_object('scenes', coalesce(json_agg(json_build_object("
		" 'scene', g.scene, 'app_version', g.app_version, 'elements', g.elements,"
		" 'frames', " LEVELS("g.f") ", 'dropped', " LEVELS("g.d") ","
		" 'frozen_share', g.f_frozen::float8"
		"  / nullif(g.f_best + g.f_normal + g.f_middle + g.f_high + g.f_frozen, 0)::float8,"
		" 'mean_fps', g.fps_sum / nullif(g.fps_count, 0)::float8) ORDER BY g.bad DESC,"
		" g.scene COLLATE \"C\", " VERSION_ORDER("g") "), '[]'))::text"
		" FROM (SELECT x.scene, x.app_version, sum(x.elements) AS elements,"
		"  sum(x.frames_best) AS f_best, sum(x.frames_normal) AS f_normal,"
		"  sum(x.frames_middle) AS f_middle, sum(x.frames_high) AS f_high,"
		"  sum(x.frames_frozen) AS f_frozen, sum(x.dropped_best) AS d_best,"
		"  sum(x.dropped_normal) AS d_normal, sum(x.dropped_middle) AS d_middle,"
		"  sum(x.dropped_high) AS d_high, sum(x.dropped_frozen) AS d_frozen,"
		"  sum(x.fps_sum) AS fps_sum, sum(x.fps_count) AS fps_count,"
		"  sum(x.frames_frozen) + sum(x.frames_high) AS bad"
		"  FROM frame_days x WHERE x.app_id = $1"
		"  AND ($2::date IS NULL OR x.day >= $2::date)"
		"  AND ($3::date IS NULL OR x.day <= $3::date)"
		"  AND ($4::text IS NULL OR x.app_version = $4) AND ($5::text IS NULL OR x.scene = $5)"
		"  GROUP BY x.scene, x.app_version"
		"  ORDER BY bad DESC, x.scene COLLATE \"C\", " VERSION_ORDER("x") " LIMIT $6) g",
		6};
	return st_run_text(c, &q,
			   (const st_param[]){ST_INT64(app_id), ST_TEXT(f->from), ST_TEXT(f->to),
					      ST_TEXT(f->version), ST_TEXT(f->scene),
					      ST_INT64(f->limit)},
			   6, out_json);
}
/* clang-format on */

int st_measures_purge(st_conn *c, int64_t app_id, const char *before_day)
{
	static const st_stmt q = {
		"measures_purge",
		"WITH k AS (DELETE FROM measure_keys WHERE app_id = $1 AND day < $2::date),"
		" s AS (DELETE FROM startup_days WHERE app_id = $1 AND day < $2::date)"
		" DELETE FROM frame_days WHERE app_id = $1 AND day < $2::date",
		2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
}
