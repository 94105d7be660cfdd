/*
 * wire.c — parameters in PostgreSQL's binary forms, for the batch
 * statements that take one array per column (see internal.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "store/internal.h"

static void wire_int32(cm_buf *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	cm_buf_put(w, b, sizeof b);
}

#define TEXT_OID 25u
void st_wire_text_array(cm_buf *w, const char *const *items, const size_t *lens, size_t n)
{
	bool nulls = false;
	for (size_t i = 0; i < n; i++)
		nulls = nulls || !items[i];
	wire_int32(w, 1);	 /* dimensions */
	wire_int32(w, nulls);	 /* has NULLs */
	wire_int32(w, TEXT_OID); /* element type */
	wire_int32(w, (uint32_t)n);
	wire_int32(w, 1); /* lower bound */
	for (size_t i = 0; i < n; i++) {
		if (!items[i]) {
			wire_int32(w, UINT32_MAX); /* length -1: NULL */
			continue;
		}
		size_t len = lens ? lens[i] : strlen(items[i]);
		if (len > INT32_MAX) {
			w->failed = true;
			return;
		}
		wire_int32(w, (uint32_t)len);
		cm_buf_put(w, items[i], len);
	}
}
