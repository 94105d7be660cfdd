/*
 * buf.c — a growable byte buffer; see buf.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

void cm_buf_put_grow(cm_buf *b, const void *p, size_t n)
{
	if (b->failed || n == 0)
		return;
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap - b->len < n && cap <= SIZE_MAX / 2)
			cap *= 2;
		char *d = cap - b->len >= n ? realloc(b->data, cap) : NULL;
		if (!d) {
			b->failed = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}
