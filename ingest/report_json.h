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

/* Which members of the native object ing_report_to_native writes. */
typedef enum ing_native_part {
	/* The whole report: parseable by ing_parse_native. */
	ING_NATIVE_WHOLE,
	/* Its stacks only ("images", "threads", "samples"): storage keeps the
	 * identity and metadata in the report's columns and writes them back
	 * in front (schema/functions/report_raw.sql), so a report does not
	 * carry them twice. */
	ING_NATIVE_STACKS,
} ing_native_part;

/*
 * R's identity, kind, device metadata (left out for ING_NATIVE_STACKS) and
 * stacks (images, threads, samples) as the JSON text of a native v1 object,
 * in that order; addresses as "0x…" strings. The client timestamp is left
 * out: it is kept as metadata beside the stored report, and formats other
 * than native may give it in other spellings. An Android report also
 * carries its Matrix element ("matrix", ing_report.matrix_content), which
 * the native parser does not read: reprocessing makes such a report from
 * it again (ingest/matrix.h). Returns malloc'ed text
 * (caller frees) with its length in *LEN (may be NULL), or NULL when out of
 * memory. OUT_STACKS (NULL, or room for 1 + R->nthreads) gets where the
 * "images" array and each thread lie in the text: what reports share, kept
 * once by storage.
 */
char *ing_report_to_native(const ing_report *r, ing_native_part part, size_t *len,
			   cm_span *out_stacks);

#endif
