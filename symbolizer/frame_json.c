/*
 * frame_json.c — see frame_json.h.
 */
#include "symbolizer/frame_json.h"

void sym_frame_json(cm_jw *w, const sym_frame *f, bool has_symbol_address,
		    uint64_t symbol_address)
{
	cm_jw_object(w);
	cm_jw_key(w, "function");
	cm_jw_string(w, f->function);
	cm_jw_key(w, "symbol");
	cm_jw_string(w, f->symbol);
	if (has_symbol_address) {
		cm_jw_key(w, "symbol_address");
		cm_jw_hex(w, symbol_address);
	}
	cm_jw_optional_string(w, "file", f->file);
	if (f->line) {
		cm_jw_key(w, "line");
		cm_jw_int(w, f->line);
	}
	if (f->column) {
		cm_jw_key(w, "column");
		cm_jw_int(w, f->column);
	}
	cm_jw_key(w, "inlined");
	cm_jw_bool(w, f->inlined);
	cm_jw_object_end(w);
}
