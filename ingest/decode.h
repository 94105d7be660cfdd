/*
 * decode.h — request body Content-Encoding (SPEC §4.1, §9): identity,
 * gzip and deflate, with a hard bound on the decompressed size.
 */
#ifndef STALLSCOPE_INGEST_DECODE_H
#define STALLSCOPE_INGEST_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/report.h"

/*
 * Decodes LEN bytes of IN per CONTENT_ENCODING: NULL, "" or "identity"
 * (copied), "gzip" / "x-gzip" (one or more concatenated members), or
 * "deflate" (zlib-wrapped as HTTP says, or raw deflate as some clients
 * send); names are case-insensitive, surrounding spaces ignored.
 * On success returns 0 and *OUT (malloc'ed, NUL-terminated one byte past
 * *OUT_LEN; caller frees) holding at most MAX_OUT bytes.
 * Failures return -1 with *err: ERR_UNSUPPORTED_MEDIA (other encodings),
 * ERR_DECOMPRESSED_TOO_LARGE (more than MAX_OUT bytes would come out: the
 * gzip-bomb case, detected without inflating past MAX_OUT + 1),
 * ERR_BAD_ENCODING (corrupt, truncated, or trailing garbage),
 * ERR_INTERNAL (out of memory). *OUT is NULL then.
 */
int ing_decode_body(const char *content_encoding, const uint8_t *in,
		    size_t len, size_t max_out, uint8_t **out,
		    size_t *out_len, ing_error *err);

#endif
