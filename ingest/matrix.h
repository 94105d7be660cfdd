/*
 * matrix.h — Matrix TraceCanary (Android) ingest bodies (SPEC §13; the
 * formats, with their sources: ../shared/tracecanary/FORMATS.md).
 *
 * Body: {"app_version","build","user_id","os_version","device",
 * "reports":[…]}; each element a content object or an Issue.toString()
 * line `tag[T]type[N];key[K];content[{…}]`. Trace_EvilMethod elements
 * become Android reports (kind by `detail`), Trace_StartUp and Trace_FPS
 * measures (ing_entry.measure). Each element is accepted or refused on
 * its own; the envelope's failures fail the body (parse.h's contract).
 *
 * The parsers, ing_parse_matrix and ing_parse_matrix_json, are declared
 * in parse.h beside the other formats' (parse.c dispatches to them without
 * depending on this module); is_batch is always true.
 *
 * Memory: as every parser (parse.h): the batch's arena owns everything,
 * nothing points into the body or the json_t given.
 */
#ifndef STALLSCOPE_INGEST_MATRIX_H
#define STALLSCOPE_INGEST_MATRIX_H

#include <stdint.h>

#include "ingest/parse.h"

/* Image 0 of a report with a method-id stack: the method mapping of the
 * report's build stands in for a binary — arch SYM_ARCH_JAVA, its UUID from
 * ing_matrix_mapping_uuid, spanning every method id — named
 * "matrix/BUILD/methodMapping.txt", so dsyms/missing can say which build's
 * mapping is missing (store/groups.c). Its frames' identities are
 * "java!…" whatever its name (ingest/symbolicate.c). */
#define ING_MATRIX_IMAGE_DIR  "matrix/"
#define ING_MATRIX_IMAGE_FILE "methodMapping.txt"
#define ING_MATRIX_IMAGE_SIZE UINT64_C(1048575)

/*
 * The UUID standing for the method mapping of (APP_VERSION, BUILD): XXH3_128
 * of "matrix-mapping" NUL app_version NUL build (canonical, big-endian
 * bytes), with the RFC 4122 variant bits and version nibble 8 set. Reports
 * wait for it like for a dSYM UUID; the mapping upload stores the table
 * under it. NULL strings count as empty.
 */
void ing_matrix_mapping_uuid(const char *app_version, const char *build, uint8_t out[16]);

/*
 * A stored Android report made again (reprocessing): TEXT is the report as
 * storage returns it (report_raw(): the metadata columns, then the stacks
 * and, under "matrix", the Matrix element it was made from,
 * ing_report_to_native). The element is parsed again under the stored
 * envelope fields, so the report is the one ingest made — same id, same
 * frames — symbolized anew. Contract as ing_parse_matrix (one entry).
 */
int ing_parse_matrix_stored(const char *text, size_t len, ing_batch **out_batch, ing_error *err);

#endif
