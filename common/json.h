/*
 * json.h — hostile-input JSON parsing on top of jansson, and printing our
 * own values faster than json_dumps.
 *
 * jansson's own nesting limit is a compile-time 2048; SPEC §4.1 wants 64 and
 * a clear message, so cm_json_parse scans the bytes once for depth (outside
 * strings) before handing them to json_loadb.
 *
 * What real clients write and their own readers take is taken here too
 * (docs/INGEST.md, "JSON"): a duplicate object key's last value wins; an
 * integer beyond 64 bits (signed) is read as a real; a comma right before
 * a closing bracket is ignored.
 */
#ifndef STALLSCOPE_COMMON_JSON_H
#define STALLSCOPE_COMMON_JSON_H

#include <jansson.h>
#include <stddef.h>

/*
 * Parses LEN bytes of BUF as one JSON value nested at most MAX_DEPTH deep.
 * BUF is never written; an edited copy lives only during the call.
 * On success returns the new value (caller decrefs). On failure returns NULL
 * and writes a one-line reason (with the byte position) to ERRBUF (ERRLEN
 * bytes; may be NULL).
 */
json_t *cm_json_parse(const char *buf, size_t len, size_t max_depth,
		      char *errbuf, size_t errlen);

/*
 * VALUE as compact JSON text, byte for byte what json_dumps(VALUE,
 * JSON_COMPACT | JSON_ENCODE_ANY) prints, at NUL-terminated malloc'ed text
 * (caller frees) with its length in *LEN (may be NULL); NULL when out of
 * memory or nested deeper than CM_JSON_DUMP_DEPTH. json_dumps guards every
 * array and object against cycles by printing its address into a hash
 * table: measured, that was a fifth of the ingest server's CPU. Values
 * built by the program (never parsed input) hold no cycles; sharing a
 * child between two parents is fine.
 */
#define CM_JSON_DUMP_DEPTH 64
char *cm_json_dump(const json_t *value, size_t *len);

#endif
