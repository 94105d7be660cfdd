/* head_check.c — see head_check.h. */
#include "server/http/head_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/utf8.h"

/* ---- Header lines -------------------------------------------------------- */

/* Every line, before a verdict: libmicrohttpd keeps duplicates. */
typedef struct scan {
	const char *length; /* the first Content-Length */
	bool conflicting;   /* lengths that differ, or a list in one line */
	const char *coding; /* the first Transfer-Encoding */
	unsigned codings;   /* Transfer-Encoding lines */
	const char *bad;    /* a name refused, why */
} scan;

/* RFC 9110 tchar. */
static bool is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

static size_t token_len(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && is_tchar((unsigned char)s[i]))
		i++;
	return i;
}

/* NAME is longer than PREFIX and starts with it, in any case. */
static bool extends(const char *name, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len > n && !strncasecmp(name, prefix, n);
}

static enum MHD_Result scan_line(void *cls, enum MHD_ValueKind kind, const char *key,
				 size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	(void)value_size;
	scan *s = cls;
	if (!value)
		value = "";
	if (key_size == 0 || token_len(key, key_size) != key_size) {
		s->bad = "a header name is not a token (whitespace before its colon, "
			 "or a folded line)";
		return MHD_NO;
	}
	/* A folded continuation line is glued onto the name: "Content-Length"
	 * followed by a token reads as another header, to us and nobody else. */
	if (extends(key, key_size, MHD_HTTP_HEADER_CONTENT_LENGTH) ||
	    extends(key, key_size, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		s->bad = "a header name runs on from Content-Length or Transfer-Encoding "
			 "(a folded line)";
		return MHD_NO;
	}
	if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		if (s->codings++ == 0)
			s->coding = value;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		if (strchr(value, ',') || (s->length && strcmp(s->length, value)))
			s->conflicting = true;
		if (!s->length)
			s->length = value;
	}
	return MHD_YES;
}

/*
 * Parses a Content-Length, saturating at UINT64_MAX (a length too long to
 * count is too long to take). False when V is not all digits; libmicrohttpd
 * refuses most such values before we see them.
 */
static bool parse_length(const char *v, uint64_t *out)
{
	if (!v || !*v)
		return false;
	uint64_t n = 0;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		unsigned d = (unsigned)(*p - '0');
		n = n > (UINT64_MAX - d) / 10 ? UINT64_MAX : n * 10 + d;
	}
	*out = n;
	return true;
}

/*
 * Why a Transfer-Encoding value is refused, with *ERR its code, or NULL:
 * libmicrohttpd reads a chunked body for exactly "chunked" and, for any
 * other value, waits for the connection's end. An element is a token,
 * maybe with parameters after ';'.
 */
static const char *check_coding(const char *v, cm_err *err)
{
	if (!strcasecmp(v, "chunked"))
		return NULL;
	bool unknown = false, malformed = false;
	for (const char *p = v;;) {
		p += strspn(p, " \t");
		size_t len = strcspn(p, ",");
		size_t name = token_len(p, len);
		if (name == 0)
			malformed = true;
		else if (name != 7 || strncasecmp(p, "chunked", 7))
			unknown = true;
		if (!p[len])
			break;
		p += len + 1;
	}
	*err = unknown && !malformed ? ERR_NOT_IMPLEMENTED : ERR_BAD_REQUEST;
	return *err == ERR_NOT_IMPLEMENTED ? "transfer coding not supported: only chunked, alone"
					   : "Transfer-Encoding: only chunked, once";
}

/* Why S is refused (ERR_NONE in *ERR: it is not), for a request of VERSION. */
static const char *verdict(const scan *s, const char *version, cm_err *err)
{
	*err = ERR_BAD_REQUEST;
	if (s->bad)
		return s->bad;
	if (s->codings > 1)
		return "more than one Transfer-Encoding line";
	/* RFC 9112 §6.1: HTTP/1.0 has no chunked framing to agree on. */
	if (s->coding && version && !strcmp(version, MHD_HTTP_VERSION_1_0))
		return "Transfer-Encoding in HTTP/1.0";
	const char *why = s->coding ? check_coding(s->coding, err) : NULL;
	if (why)
		return why;
	*err = ERR_BAD_REQUEST;
	if (s->length && s->coding)
		return "both Content-Length and Transfer-Encoding";
	if (s->conflicting)
		return "conflicting Content-Length";
	*err = ERR_NONE;
	return NULL;
}

void srv_framing_read(struct MHD_Connection *conn, const char *version, srv_framing *out)
{
	memset(out, 0, sizeof *out);
	scan s = {0};
	MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_line, &s);
	out->why = verdict(&s, version, &out->err);
	if (out->err == ERR_NONE)
		out->has_length = parse_length(s.length, &out->length);
}

/* ---- Query arguments ----------------------------------------------------- */

typedef struct arg {
	const char *key;
	size_t key_size;
} arg;

typedef struct args {
	arg *v;
	size_t n, cap;
	const char *bad; /* static: why one is refused */
} args;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				   size_t key_size, const char *value, size_t value_size)
{
	(void)kind;
	args *a = cls;
	/* Sizes are what was decoded; the string stops at the first NUL. */
	if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
		a->bad = "a query argument decodes to a NUL byte";
		return MHD_NO;
	}
	if (!cm_utf8_valid(key) || (value && !cm_utf8_valid(value))) {
		a->bad = "request target: not valid UTF-8";
		return MHD_NO;
	}
	if (a->n < a->cap)
		a->v[a->n++] = (arg){key, key_size};
	return MHD_YES;
}

static int by_key(const void *x, const void *y)
{
	return strcasecmp(((const arg *)x)->key, ((const arg *)y)->key);
}

cm_err srv_query_check(struct MHD_Connection *conn, char *msg, size_t cap)
{
	int count = MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, NULL, NULL);
	if (count <= 0)
		return ERR_NONE;
	args a = {.cap = (size_t)count};
	a.v = malloc(a.cap * sizeof *a.v);
	if (!a.v) {
		snprintf(msg, cap, "out of memory");
		return ERR_INTERNAL;
	}
	MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &a);
	cm_err err = ERR_NONE;
	if (a.bad) {
		snprintf(msg, cap, "%s", a.bad);
		err = ERR_BAD_QUERY;
	} else {
		/* Lookups answer the first of a repeated name: a proxy or a
		 * cache keyed on another could be told one thing, we another. */
		qsort(a.v, a.n, sizeof *a.v, by_key);
		for (size_t i = 1; i < a.n && err == ERR_NONE; i++)
			if (!strcasecmp(a.v[i - 1].key, a.v[i].key)) {
				snprintf(msg, cap, "query argument %.64s given more than once",
					 a.v[i].key);
				err = ERR_BAD_QUERY;
			}
	}
	free(a.v);
	return err;
}
