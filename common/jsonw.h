/*
 * jsonw.h — JSON text written straight into a cm_buf, value by value.
 *
 * The ingest hot path turns every report into about 14 KB of JSON (its
 * native form, its symbolized form). Building jansson trees first and
 * printing them cost the server half of its CPU in allocations, frees and
 * tree walks (docs/journal/performance.md); writing the text as the values are
 * known costs a memcpy each. Strings are escaped exactly as jansson's
 * json_dumps does, so text read back by jansson and printed again is
 * unchanged.
 *
 * Commas are placed by the writer: a value or key after a value in the same
 * container gets one. Keys and values must alternate inside objects; the
 * writer does not check nesting (its callers are our own code, never input).
 *
 * Memory: the text accumulates in W->buf (see cm_buf: the owner frees
 * buf.data, also after a failure, which cm_jw_finish reports).
 */
#ifndef STALLSCOPE_COMMON_JSONW_H
#define STALLSCOPE_COMMON_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef struct cm_jw {
	cm_buf buf;
	bool comma; /* the next key or value follows a value */
} cm_jw;

/* Where one value lies in a written text: bytes [at, at + len). */
typedef struct cm_span {
	size_t at, len;
} cm_span;

void cm_jw_object(cm_jw *w);
void cm_jw_object_end(cm_jw *w);
void cm_jw_array(cm_jw *w);
void cm_jw_array_end(cm_jw *w);
/* KEY (NUL-terminated, written unescaped: our own field names only). */
void cm_jw_key(cm_jw *w, const char *key);
/* S as a string, escaped; NULL writes null. */
void cm_jw_string(cm_jw *w, const char *s);
void cm_jw_stringn(cm_jw *w, const char *s, size_t n);
/* KEY and S, or nothing when S is NULL: a member left out when unknown. */
void cm_jw_optional_string(cm_jw *w, const char *key, const char *s);
void cm_jw_int(cm_jw *w, int64_t v);
/* V as the string "0x…" (lowercase, no leading zeros). */
void cm_jw_hex(cm_jw *w, uint64_t v);
/* V as jansson prints a real (17 significant digits, ".0" when it would
 * read as an integer); null when V is not finite, which JSON cannot say. */
void cm_jw_real(cm_jw *w, double v);

/* Reals printed once and copied after: printing one costs about a
 * microsecond, and a reply of many rows repeats few values (the 70,000
 * rates, p-values and intervals of a 14,000-group comparison hold 2,240).
 * A direct-mapped table of 2^CM_JW_REAL_MEMO_BITS texts, zeroed by its
 * owner (the caller, about 200 KB: allocate it). */
#define CM_JW_REAL_MAX	     40
#define CM_JW_REAL_MEMO_BITS 12
typedef struct cm_jw_real_memo {
	uint64_t bits[1u << CM_JW_REAL_MEMO_BITS];
	uint8_t len[1u << CM_JW_REAL_MEMO_BITS]; /* 0: empty */
	char text[1u << CM_JW_REAL_MEMO_BITS][CM_JW_REAL_MAX];
} cm_jw_real_memo;
/* The same as cm_jw_real, through M. */
void cm_jw_real_memoized(cm_jw *w, cm_jw_real_memo *m, double v);
void cm_jw_bool(cm_jw *w, bool v);
void cm_jw_null(cm_jw *w);
/* N bytes of JSON text written as one value (the caller vouches for it). */
void cm_jw_raw(cm_jw *w, const char *json, size_t n);

/* Ends a top-level value with a newline (JSON Lines): the next value
 * starts a line of its own rather than continuing a list. */
void cm_jw_line_end(cm_jw *w);

/* Appends the NUL and hands the text over: malloc'ed (caller frees), its
 * length without the NUL in *LEN (may be NULL). NULL when an allocation
 * failed; W's buffer is released either way. */
char *cm_jw_finish(cm_jw *w, size_t *len);

/* S (N bytes) escaped as jansson does, with its quotes, appended to B. */
void cm_json_put_string(cm_buf *b, const char *s, size_t n);

#endif
