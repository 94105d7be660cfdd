/*
 * ingest_testutil.h — helpers for the ingest unit tests: reading the real
 * payloads under ../shared/formats (relative to the repository root, where
 * `make unit` runs the tests; STALLSCOPE_FORMATS overrides), reading files,
 * and building JSON programmatically.
 */
#ifndef STALLSCOPE_TESTS_INGEST_TESTUTIL_H
#define STALLSCOPE_TESTS_INGEST_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads PATH whole (NUL-terminated); fails the test when unreadable. */
static inline char *tu_read_file(const char *path, size_t *out_len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		fail();
	}
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t n = fread(buf + len, 1, 4096, f);
		len += n;
		if (n < 4096)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	if (out_len)
		*out_len = len;
	return buf;
}

/* A file of the shared real payloads, e.g. "kscrash/NSException.json". */
static inline char *tu_read_format(const char *rel, size_t *out_len)
{
	const char *dir = getenv("STALLSCOPE_FORMATS");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", dir ? dir : "../shared/formats",
		 rel);
	return tu_read_file(path, out_len);
}

/* printf into a malloc'ed string. */
static inline char *tu_printf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline char *tu_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	assert_true(n >= 0);
	char *s = malloc((size_t)n + 1);
	assert_non_null(s);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* A growing string buffer for building big bodies. */
typedef struct tu_buf {
	char *s;
	size_t len, cap;
} tu_buf;

static inline void tu_add(tu_buf *b, const char *text)
{
	size_t n = strlen(text);
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		assert_non_null(b->s);
	}
	memcpy(b->s + b->len, text, n + 1);
	b->len += n;
}

static inline void tu_addf(tu_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void tu_addf(tu_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	tu_add(b, tmp);
}

#endif
