/*
 * frame_json.h — one symbolized frame as the JSON object every output of
 * ours uses (SPEC §3.5, §4.4): `stallscope symbolicate` and the frames
 * stored with a report.
 *
 * Memory: writes into the caller's cm_jw; keeps nothing.
 */
#ifndef STALLSCOPE_SYMBOLIZER_FRAME_JSON_H
#define STALLSCOPE_SYMBOLIZER_FRAME_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "common/jsonw.h"
#include "symbolizer/symbolizer.h"

/* F as {"function","symbol","symbol_address","file","line","column",
 * "inlined"}: SYMBOL_ADDRESS (in whichever address space the caller shows)
 * only when HAS_SYMBOL_ADDRESS, file, line and column only when known. */
void sym_frame_json(cm_jw *w, const sym_frame *f, bool has_symbol_address,
		    uint64_t symbol_address);

#endif
