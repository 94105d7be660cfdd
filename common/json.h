/*
 * json.h — hostile-input JSON parsing on top of jansson.
 *
 * jansson's own nesting limit is a compile-time 2048; SPEC §4.1 wants 64 and
 * a clear message, so cm_json_parse scans the bytes once for depth (outside
 * strings) before handing them to json_loadb.
 */
#ifndef STALLSCOPE_COMMON_JSON_H
#define STALLSCOPE_COMMON_JSON_H

#include <jansson.h>
#include <stddef.h>

/*
 * Parses LEN bytes of BUF as one JSON value nested at most MAX_DEPTH deep.
 * On success returns the new value (caller decrefs). On failure returns NULL
 * and writes a one-line reason (with the byte position) to ERRBUF (ERRLEN
 * bytes; may be NULL).
 */
json_t *cm_json_parse(const char *buf, size_t len, size_t max_depth,
		      char *errbuf, size_t errlen);

#endif
