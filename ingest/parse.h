/*
 * parse.h — turning request bodies into ing_reports (SPEC §4).
 *
 * One entry point per format; each takes the (already decompressed) body,
 * the limits and the X-Stallscope-User value, and yields a batch: one entry
 * per report found in the body, each either a parsed report or a rejection
 * naming the failing field ("reports[3].threads[0].frames[7]: not a hex
 * address string"). An entry is rejected on its own; the others stand.
 *
 * A body that is not JSON, has the wrong top-level shape, holds no entry
 * (native and KSCrash; a MetricKit payload with no stored kind of
 * diagnostic is an empty batch), holds more than limits->max_reports
 * entries or needs more than
 * limits->max_memory bytes of report model fails as a whole: the call
 * returns -1 with *err set (ERR_BAD_JSON, ERR_BAD_FIELD, ERR_TOO_MANY,
 * ERR_BODY_TOO_LARGE; ERR_INTERNAL when malloc fails) and no batch.
 *
 * Memory: the batch, its entries, reports and every string live in one
 * arena; ing_batch_free releases it all. Nothing points into BODY or into
 * the json_t a *_json variant was given, so both may be freed right after
 * the call. The json_t variants never change or keep the value.
 *
 * Formats and every choice where the spec is silent: docs/INGEST.md.
 */
#ifndef STALLSCOPE_INGEST_PARSE_H
#define STALLSCOPE_INGEST_PARSE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "ingest/report.h"

typedef enum ing_format {
	ING_FORMAT_NATIVE = 0, /* POST /api/v1/ingest */
	ING_FORMAT_METRICKIT,  /* POST /api/v1/ingest/metrickit */
	ING_FORMAT_KSCRASH,    /* POST /api/v1/ingest/kscrash */
	ING_FORMAT_IPS,	       /* POST /api/v1/ingest/ips */
	ING_FORMAT_MATRIX,     /* POST /api/v1/ingest/matrix (ingest/matrix.h) */
} ing_format;

/* "native", "metrickit", "kscrash", "ips", "matrix" (also
 * ing_report.source). */
const char *ing_format_name(ing_format format);

/* A Matrix element that is a measurement, not a stall (SPEC §13):
 * Trace_StartUp feeds GET …/startup, Trace_FPS GET …/frames. */
typedef enum ing_measure_kind {
	ING_MEASURE_STARTUP = 1,
	ING_MEASURE_FRAMES,
} ing_measure_kind;

/* Matrix's frame drop levels, in its order (FrameTracer's buckets). */
enum {
	ING_DROP_BEST,
	ING_DROP_NORMAL,
	ING_DROP_MIDDLE,
	ING_DROP_HIGH,
	ING_DROP_FROZEN,
	ING_DROP_LEVELS
};

typedef struct ing_measure {
	ing_measure_kind kind;
	/* Its idempotency key (as a report's report_id) and the envelope's
	 * dimensions. */
	const char *key, *app_version, *build, *user_id, *os_version, *device;
	int64_t time_ms; /* Matrix "time", device epoch ms; -1 when absent */
	/* ING_MEASURE_STARTUP: durations in ms, -1 when absent. */
	bool warm;
	int64_t startup_ms, application_create_ms, first_activity_create_ms;
	/* ING_MEASURE_FRAMES: the scene ("" when none), frames per drop
	 * level, dropped frames summed per level, and fps as sent. */
	const char *scene;
	int64_t drop_level[ING_DROP_LEVELS], drop_sum[ING_DROP_LEVELS];
	double fps;
} ing_measure;

typedef struct ing_entry {
	ing_report *report; /* NULL when rejected (or a measure) */
	/* An accepted Matrix measurement (REPORT NULL, error ERR_NONE). */
	ing_measure *measure;
	/* The entry's idempotency key when it could be read (also for most
	 * rejections), else NULL. Equals report->report_id when accepted. */
	const char *report_id;
	ing_error error;       /* code ERR_NONE when accepted */
} ing_entry;

typedef struct ing_batch {
	ing_arena *arena;      /* owns everything reachable from here */
	/* The body used a collection form ({"reports":[…]}, a JSON array, a
	 * MetricKit payload): reply 202 with accepted/rejected lists. When
	 * false there is exactly one entry and a rejection gets its own
	 * status (SPEC §7). */
	bool is_batch;
	ing_entry *entries;
	size_t nentries;
} ing_batch;

/* Releases the batch and everything in it. NULL is fine. */
void ing_batch_free(ing_batch *batch);

/*
 * Parses BODY (LEN bytes) in FORMAT. LIMITS NULL means ing_limits_default().
 * USER_ID is the X-Stallscope-User header value or NULL; it is copied into
 * each report that names no user of its own (a body field wins), and it is
 * part of the MetricKit idempotency key.
 * Returns 0 and *out_batch (free with ing_batch_free), or -1 and *err.
 */
int ing_parse(ing_format format, const char *body, size_t len,
	      const ing_limits *limits, const char *user_id,
	      ing_batch **out_batch, ing_error *err);

/* The same per format. */
int ing_parse_native(const char *body, size_t len, const ing_limits *limits,
		     const char *user_id, ing_batch **out_batch,
		     ing_error *err);
int ing_parse_metrickit(const char *body, size_t len,
			const ing_limits *limits, const char *user_id,
			ing_batch **out_batch, ing_error *err);
int ing_parse_kscrash(const char *body, size_t len, const ing_limits *limits,
		      const char *user_id, ing_batch **out_batch,
		      ing_error *err);
/* .ips: a one-line JSON header, a newline, then the JSON body. */
int ing_parse_ips(const char *body, size_t len, const ing_limits *limits,
		  const char *user_id, ing_batch **out_batch, ing_error *err);
/* Matrix TraceCanary's envelope of Android elements (ingest/matrix.h);
 * is_batch is always true. */
int ing_parse_matrix(const char *body, size_t len, const ing_limits *limits, const char *user_id,
		     ing_batch **out_batch, ing_error *err);

/*
 * The JSON formats over an already parsed value (the caller parsed it with
 * cm_json_parse and owns it). Depth limits are the caller's business here.
 */
int ing_parse_native_json(const json_t *root, const ing_limits *limits,
			  const char *user_id, ing_batch **out_batch,
			  ing_error *err);
int ing_parse_metrickit_json(const json_t *root, const ing_limits *limits,
			     const char *user_id, ing_batch **out_batch,
			     ing_error *err);
int ing_parse_kscrash_json(const json_t *root, const ing_limits *limits,
			   const char *user_id, ing_batch **out_batch,
			   ing_error *err);
int ing_parse_matrix_json(const json_t *root, const ing_limits *limits, const char *user_id,
			  ing_batch **out_batch, ing_error *err);

/*
 * The idempotency key of one MetricKit diagnostic entry (an element of
 * hangDiagnostics / cpuExceptionDiagnostics / crashDiagnostics):
 * XXH3_128 over the entry serialized by json_dumps(JSON_SORT_KEYS |
 * JSON_COMPACT), a NUL byte, and USER_ID (empty when NULL), written as 32
 * lowercase hex digits (high 64 bits first) plus NUL to OUT.
 * Returns 0, or -1 when the entry cannot be serialized.
 */
int ing_metrickit_entry_key(const json_t *entry, const char *user_id,
			    char out[33]);

/*
 * The JSON nesting a MetricKit body may need: limits->max_depth plus two
 * levels per frame of a max_frames deep tree, capped at what jansson can
 * parse (JSON_PARSER_MAX_DEPTH).
 */
size_t ing_metrickit_max_depth(const ing_limits *limits);

#endif
