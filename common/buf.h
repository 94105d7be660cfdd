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

typedef struct cm_buf {
	char *data;
	size_t len, cap;
	bool failed;
} cm_buf;

/* Appends N bytes of P; after a failure, nothing. */
void cm_buf_put(cm_buf *b, const void *p, size_t n);

#endif
