/*
 * measures.h — Android startup and frame measurements (Matrix's
 * Trace_StartUp and Trace_FPS, SPEC §13), kept as per-day aggregates
 * (schema/050_android_measures.sql): written at ingest, read by
 * GET …/startup and GET …/frames. Same conventions as store.h: negative =
 * failure (ST_SOFT_ERROR / ST_HARD_ERROR). Days are "YYYY-MM-DD" (UTC).
 *
 * st_measure mirrors ingest/parse.h's ing_measure (the store is below
 * ingest and may not include it): the ingest route copies the fields.
 *
 * Memory: input strings and arrays are borrowed for the call; *out_json
 * (malloc) belongs to the caller.
 */
#ifndef STALLSCOPE_STORE_MEASURES_H
#define STALLSCOPE_STORE_MEASURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

typedef enum st_measure_kind {
	ST_MEASURE_STARTUP = 1,
	ST_MEASURE_FRAMES,
} st_measure_kind;

/* Matrix's frame drop levels in its order (as ING_DROP_*). */
enum { ST_DROP_BEST, ST_DROP_NORMAL, ST_DROP_MIDDLE, ST_DROP_HIGH, ST_DROP_FROZEN, ST_DROP_LEVELS };

typedef struct st_measure {
	st_measure_kind kind;
	/* The idempotency key (not NULL); the app version (NULL: none). */
	const char *key, *app_version;
	/* Every figure is the client's: any value is stored without
	 * failing the batch. One above 2^31 - 1 counts as 2^31 - 1, so no
	 * day's sum can overflow (it would take 2^32 such elements); the
	 * parser refuses absurd ones first (SPEC §13). */
	/* ST_MEASURE_STARTUP: durations in ms, -1 when absent (a startup
	 * without startup_ms is not counted). */
	bool warm;
	int64_t startup_ms, application_create_ms, first_activity_create_ms;
	/* ST_MEASURE_FRAMES: the scene (NULL or "": none), frames per drop
	 * level, dropped frames summed per level (negatives count as 0), and
	 * fps (one negative, above 1000 or not finite is left out of the
	 * mean). */
	const char *scene;
	int64_t drop_level[ST_DROP_LEVELS], drop_sum[ST_DROP_LEVELS];
	double fps;
} st_measure;

/*
 * Adds the N measurements M of APP_ID received on DAY to the aggregates,
 * each key once ever, in one statement on C (inside the caller's
 * transaction): STORED[i] is true when M[i]'s key was new (it is counted
 * now; a startup without startup_ms only records its key), false when it
 * was counted before (a resend, or a repeat within M). 1 (also for N = 0),
 * or a negative st_status (STORED then means nothing).
 */
int st_measures_add(st_conn *c, int64_t app_id, const char *day, const st_measure *const *m,
		    size_t n, bool *stored);

/* st_measures_add in a transaction of its own (st_run_tx); STORED is
 * untouched on failure. */
int st_measures_commit(int64_t app_id, const char *day, const st_measure *const *m, size_t n,
		       bool *stored);

/* What the reads cover: days FROM … TO (NULL: unbounded), VERSION and
 * SCENE (NULL: any; "" is the rows without one). SCENE and LIMIT (the
 * most rows replied) are the frames read's only. */
typedef struct st_measures_filter {
	const char *from, *to, *version, *scene;
	int64_t limit;
} st_measures_filter;

/* {"versions":[{"app_version","cold","warm"}],"days":[{"day","app_version",
 * "cold","warm"}]} of APP_ID under F, each side {"count","p50_ms","p90_ms",
 * "mean_ms","max_ms","application_create_mean_ms",
 * "first_activity_create_mean_ms"} (count 0 and nulls when none), into
 * *OUT_JSON. Versions in version order, days by day then version. 1. */
int st_startup_read(st_conn *c, int64_t app_id, const st_measures_filter *f, char **out_json);

/* {"scenes":[{"scene","app_version","elements","frames":{"best","normal",
 * "middle","high","frozen"},"dropped":{same},"frozen_share","mean_fps"}]}
 * of APP_ID under F, one per scene and version, by frozen + high frames
 * descending, at most F->limit, into *OUT_JSON. 1. */
int st_frames_read(st_conn *c, int64_t app_id, const st_measures_filter *f, char **out_json);

/* Retention: deletes APP_ID's aggregate rows and keys of days before
 * BEFORE_DAY (st_reports_purge calls it). 0 or more, or a negative
 * st_status. */
int st_measures_purge(st_conn *c, int64_t app_id, const char *before_day);

#endif
