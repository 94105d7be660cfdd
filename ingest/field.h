/*
 * field.h — helpers shared by the ingest parsers (internal to ingest/; no
 * other folder includes it): the parse context, field readers that name the
 * failing field, address/number/timestamp checks, batch scaffolding.
 *
 * Paths: every reader takes WHERE, the path of the enclosing value
 * ("reports[3]", "" at the top), and reports "WHERE.key: reason".
 */
#ifndef STALLSCOPE_INGEST_FIELD_H
#define STALLSCOPE_INGEST_FIELD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ingest/parse.h"

/* Largest integer a JSON number may carry (SPEC §4.1: above is rejected). */
#define ING_JSON_INT_MAX ((uint64_t)1 << 53)
/* Report ids travel in URLs and logs: printable ASCII, no space. */
#define ING_REPORT_ID_MAX 128
/* Room for a field path in messages. */
#define ING_PATH_MAX 160

typedef struct ing_ctx {
	ing_arena *arena;
	const ing_limits *limits;
	ing_error *err;
	const char *user_id; /* arena copy of the caller's user id, or NULL */
	bool fatal;          /* the failure sinks the whole body (memory) */
} ing_ctx;

/* Sets ctx->err; returns -1. */
int ing_fail(ing_ctx *ctx, cm_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An arena allocation failed: marks the failure fatal; returns -1. */
int ing_nomem(ing_ctx *ctx);

/* WHERE joined with KEY / [INDEX] into BUF. */
const char *ing_path_key(char *buf, size_t n, const char *where,
			 const char *key);
const char *ing_path_index(char *buf, size_t n, const char *where,
			   size_t index);

/* ID at PATH: 1…ING_REPORT_ID_MAX printable ASCII bytes, no space. */
int ing_check_report_id(ing_ctx *ctx, const char *id, const char *path);

/* JSON null counts as absent for every optional field. */
const json_t *ing_get(const json_t *obj, const char *key);

/*
 * A string value at PATH, copied into the arena. Empty strings yield NULL
 * (absent) unless REQUIRED, where they fail like a missing field. Longer
 * than limits->max_string fails.
 */
int ing_string_value(ing_ctx *ctx, const json_t *v, const char *path,
		     bool required, const char **out);
/* obj[KEY] as above; absent → *out NULL (failure when REQUIRED). */
int ing_string_field(ing_ctx *ctx, const json_t *obj, const char *where,
		     const char *key, bool required, const char **out);
/* An optional string a report is counted under (or one they are split
 * from, like "iPhone OS 17.2 (21C62)"): as ing_string_field, and longer
 * than limits->max_dimension fails. */
int ing_dimension_field(ing_ctx *ctx, const json_t *obj, const char *where, const char *key,
			const char **out);

/*
 * Address forms: "0x…" hex strings (1–16 significant digits), decimal
 * digit strings (≤ 2^64-1), JSON integers 0…2^53. NULL on success, else
 * the reason ("not a hex address string", …).
 */
const char *ing_address_value(const json_t *v, uint64_t *out);

/* A JSON integer in 0…MAX. NULL on success, else the reason. */
const char *ing_uint_value(const json_t *v, uint64_t max, uint64_t *out);

/* obj[KEY] as a UUID string (with or without dashes). Absent → false. */
int ing_uuid_field(ing_ctx *ctx, const json_t *obj, const char *where,
		   const char *key, bool *has, uint8_t out[16]);

/*
 * Normalizes the time forms devices send into RFC 3339 in the arena:
 * RFC 3339 as is; "YYYY-MM-DD HH:MM:SS[.frac][ ±HHMM]" (MetricKit, .ips).
 * NULL when TEXT is none of these (or memory ran out: check the arena).
 */
const char *ing_timestamp_normalize(ing_ctx *ctx, const char *text);
/* Seconds since the epoch (UTC) as RFC 3339 "…Z" in the arena. */
const char *ing_timestamp_from_epoch(ing_ctx *ctx, int64_t seconds);

/* "iPhone OS 17.2 (21C62)" → os "iOS", version "17.2", build "21C62". */
int ing_os_split(ing_ctx *ctx, const char *text, const char **os,
		 const char **version, const char **build);

/*
 * Batch scaffolding: a new arena and empty batch (is_batch false), with
 * ctx set up over it. Returns -1 and sets *err on failure.
 */
int ing_batch_begin(const ing_limits *limits, const char *user_id,
		    ing_error *err, ing_ctx *ctx, ing_batch **out);
/* Room for N entries. */
int ing_batch_reserve(ing_ctx *ctx, ing_batch *batch, size_t n);
/* Frees the batch and hands on the failure already in *ctx->err. */
int ing_batch_abort(ing_ctx *ctx, ing_batch *batch);

/* V at PATH as the frames of S: an array of at most max_frames entries;
 * S->frames is allocated (zeroed) for the caller to fill. 0, or -1. */
int ing_stack_alloc(ing_ctx *ctx, const json_t *v, const char *path,
		    ing_stack *s);

/* N threads at PATH (V, whatever collection the format uses): at least
 * one, at most max_threads; R->threads is allocated (zeroed) for N and
 * R->nthreads left to the caller. 0, or -1. */
int ing_threads_alloc(ing_ctx *ctx, size_t n, const char *path, ing_report *r);

/* IMG's load address from V[ADDR_KEY] (required) and size from V["size"]
 * (optional; load address + size must not overflow). 0, or -1. */
int ing_image_span(ing_ctx *ctx, const json_t *v, const char *where,
		   const char *addr_key, ing_image *img);

/* V as a report_id worth naming in a rejection (a string of 1 to
 * ING_REPORT_ID_MAX bytes), copied to the arena; NULL otherwise. */
const char *ing_peek_id(ing_ctx *ctx, const json_t *v);

/* Parses one entry O (at path WHERE) into R; sets ctx->err, returns -1. */
typedef int (*ing_entry_parse_fn)(ing_ctx *ctx, const json_t *o,
				  const char *where, ing_report *r);
/* The report_id of an entry that failed to parse, if it has a readable
 * one (rejections name it); NULL otherwise. */
typedef const char *(*ing_entry_id_fn)(ing_ctx *ctx, const json_t *o);

/*
 * Fills B with the body's entries and hands it out: with LIST (the body's
 * JSON array of reports, LABEL in messages) every element, refused as a
 * whole when empty or longer than max_reports; else ROOT alone. Each entry
 * is parsed by PARSE on its own: a rejected one keeps its error and the
 * report_id PEEK finds. Returns 0 with *OUT_BATCH = B, or -1 with *ERR (B
 * freed).
 */
int ing_batch_entries(ing_ctx *ctx, ing_batch *b, const json_t *root,
		      const json_t *list, const char *label,
		      ing_entry_parse_fn parse, ing_entry_id_fn peek,
		      ing_error *err, ing_batch **out_batch);

/* The JSON variant of a format's parser (ing_parse_*_json). */
typedef int (*ing_json_parse_fn)(const json_t *root, const ing_limits *limits,
				 const char *user_id, ing_batch **out_batch,
				 ing_error *err);

/*
 * A text body through PARSE: LIMITS NULL means the defaults; MAX_DEPTH 0
 * means limits->max_depth. Same contract as ing_parse().
 */
int ing_parse_text(ing_json_parse_fn parse, const char *body, size_t len,
		   const ing_limits *limits, size_t max_depth,
		   const char *user_id, ing_batch **out_batch, ing_error *err);

/* Parses BODY with cm_json_parse at MAX_DEPTH; ERR_BAD_JSON on failure. */
json_t *ing_json_load(const char *body, size_t len, size_t max_depth,
		      ing_error *err);

#endif
