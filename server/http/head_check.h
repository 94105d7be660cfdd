/*
 * head_check.h — what a request's head must be before any body byte is
 * read: header lines that frame the body one way only, and a query whose
 * every argument means one thing.
 *
 * libmicrohttpd 0.9.75 is lenient where a proxy in front may read the
 * same bytes otherwise: it keeps "Content-Length :" as a header of another
 * name (no body, so the body runs as the next request), glues a folded
 * continuation line onto the header's name, reads only the first
 * Transfer-Encoding line and waits for the connection's end on any coding
 * but a lone "chunked". Its query lookups answer the first of repeated
 * arguments and a value cut at a decoded NUL. These checks refuse all of
 * them, so that what we read is what anyone in front read.
 *
 * Memory: nothing returned is allocated; messages are static or written
 * into the caller's buffer.
 */
#ifndef STALLSCOPE_SERVER_HEAD_CHECK_H
#define STALLSCOPE_SERVER_HEAD_CHECK_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/errors.h"

/* How the request frames its body, from every header line. */
typedef struct srv_framing {
	bool has_length; /* a Content-Length, parsed into LENGTH */
	uint64_t length; /* saturated at UINT64_MAX */
	/* ERR_NONE, or the refusal: the connection must then be closed, as
	 * nothing after this head can be trusted to start the next request. */
	cm_err err;
	const char *why; /* static: what is wrong, for the reply */
} srv_framing;

/*
 * Reads CONN's header lines (VERSION: the request's "HTTP/1.x") into OUT.
 * Refused, 400: a header name that is not an RFC 9110 token (whitespace
 * before the colon, a folded line glued on) or that only starts like
 * Content-Length or Transfer-Encoding, both framings at once, differing
 * lengths, more than one Transfer-Encoding line or coding, one in
 * HTTP/1.0; 501: a transfer coding other than chunked.
 */
void srv_framing_read(struct MHD_Connection *conn, const char *version, srv_framing *out);

/*
 * Checks CONN's query arguments as decoded: ERR_NONE, or ERR_BAD_QUERY (a
 * name or value that is not UTF-8 or holds a NUL byte, a name given twice
 * in any case, which is how lookups match) or ERR_INTERNAL (out of memory)
 * with MSG (CAP bytes) saying which.
 */
cm_err srv_query_check(struct MHD_Connection *conn, char *msg, size_t cap);

#endif
