/*
 * report_json.h — an ing_report written back as a native v1 report, so a
 * stored report can be parsed again with ing_parse_native and
 * re-symbolized when its symbols arrive (reprocessing).
 */
#ifndef STALLSCOPE_INGEST_REPORT_JSON_H
#define STALLSCOPE_INGEST_REPORT_JSON_H

#include <stddef.h>

#include "common/jsonw.h"
#include "ingest/report.h"

/*
 * R's identity, kind, device metadata and stacks (images, threads,
 * samples) as the JSON text of a native v1 object; addresses as "0x…"
 * strings. The client timestamp is left out: it is kept as metadata beside
 * the stored report, and formats other than native may give it in other
 * spellings. Returns malloc'ed text (caller frees) with its length in *LEN
 * (may be NULL), or NULL when out of memory. OUT_STACKS (NULL, or room
 * for 1 + R->nthreads) gets where the "images" array and each thread lie
 * in the text: what reports share, kept once by storage.
 */
char *ing_report_to_native(const ing_report *r, size_t *len, cm_span *out_stacks);

#endif
