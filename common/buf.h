/*
 * buf.h — a growable byte buffer for writers that append piece by piece:
 * a failed allocation is remembered rather than returned, so a writer
 * appends unconditionally and checks FAILED once at the end.
 *
 * Memory: DATA is malloc'ed and belongs to whoever owns the cm_buf (free
 * it, also after a failure). Start from a zeroed cm_buf.
 */
#ifndef STALLSCOPE_COMMON_BUF_H
#define STALLSCOPE_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct cm_buf {
	char *data;
	size_t len, cap;
	bool failed;
} cm_buf;

/* cm_buf_put when B lacks room or has failed: grows B, or marks it failed. */
void cm_buf_put_grow(cm_buf *b, const void *p, size_t n);

/* Appends N bytes of P; after a failure, nothing. Inline: JSON writers
 * append a few bytes at a time, and a call per piece was most of their
 * cost. */
static inline void cm_buf_put(cm_buf *b, const void *p, size_t n)
{
	if (!b->failed && b->cap - b->len >= n) {
		if (n)
			memcpy(b->data + b->len, p, n);
		b->len += n;
		return;
	}
	cm_buf_put_grow(b, p, n);
}

#endif
