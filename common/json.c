/*
 * json.c — hostile-input JSON parsing on top of jansson (see json.h).
 *
 * jansson checks nesting only against its compile-time limit (2048) and
 * reports it with a generic message, so the bytes are scanned once first:
 * depth is counted on '[' and '{' outside strings (a backslash escapes the
 * next byte inside a string), and a NUL byte anywhere is refused because
 * callers hand the text on to C string functions and PostgreSQL.
 *
 * The same scan makes two edits jansson has no flag for, each in place and
 * of the same length (so jansson's error positions still point into the
 * caller's bytes), on a copy made only when one is needed:
 * - an integer beyond json_int_t (Apple's .ips registers, KSCrash's
 *   uint64 fields) keeps its sign and leading digits and ends in "e2", so
 *   jansson reads it as a real of about the same value instead of failing
 *   the whole body with "too big integer"; readers that need an integer
 *   refuse a real, and the 2^53 rule refuses it by value (SPEC §4.1);
 * - a comma that follows a value and precedes only whitespace and a
 *   closing bracket becomes a space (KSCrash's own reader skips it).
 * Duplicate object keys are left to jansson, whose later value replaces
 * the earlier one, as JSON.parse and Python's json do.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/json.h"
#include "common/jsonw.h"

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
	if (!errbuf || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether the ND digits at D (no leading zero) exceed json_int_t: above
 * 2^63 - 1, or above 2^63 for a negative number. */
static bool beyond_int64(const char *d, size_t nd, bool negative)
{
	const char *limit = negative ? "9223372036854775808"
				     : "9223372036854775807";
	size_t n = strlen(limit);
	return nd > n || (nd == n && memcmp(d, limit, n) > 0);
}

/* The edits above go to *COPY, made from BUF on the first one. */
static int edit(const char *buf, size_t len, char **copy, size_t at,
		const char *text, size_t n, char *errbuf, size_t errlen)
{
	if (!*copy) {
		if (!(*copy = malloc(len))) {
			set_err(errbuf, errlen, "out of memory");
			return -1;
		}
		memcpy(*copy, buf, len);
	}
	memcpy(*copy + at, text, n);
	return 0;
}

/* Past the string opening at *I, to its closing quote; -1 on a NUL. */
static int skip_string(const char *buf, size_t len, size_t *at, char *errbuf, size_t errlen)
{
	size_t i = *at;
	for (i++; i < len && buf[i] != '"'; i++) {
		if (buf[i] == '\0') {
			set_err(errbuf, errlen, "NUL byte at byte %zu", i);
			return -1;
		}
		/* The escaped byte cannot end the string, but it still must
		 * not be a NUL. */
		if (buf[i] == '\\' && i + 1 < len && buf[++i] == '\0') {
			set_err(errbuf, errlen, "NUL byte at byte %zu", i);
			return -1;
		}
	}
	*at = i;
	return 0;
}

/* The comma at I: blanked when it trails the last value of an array or
 * object (PREV is the last byte outside strings and whitespace); 1 when
 * blanked, 0 when kept, -1 on failure. */
static int trailing_comma(const char *buf, size_t len, size_t i, char prev, char **copy,
			  char *errbuf, size_t errlen)
{
	size_t j = i + 1;
	while (j < len && is_space(buf[j]))
		j++;
	bool after_value = prev && prev != '[' && prev != '{' && prev != ',' && prev != ':';
	if (!after_value || j >= len || (buf[j] != ']' && buf[j] != '}'))
		return 0;
	return edit(buf, len, copy, i, " ", 1, errbuf, errlen) < 0 ? -1 : 1;
}

/* The number starting at *AT, left at its last byte: an integer beyond
 * int64 is made a real (jansson would refuse it). */
static int number(const char *buf, size_t len, size_t *at, char **copy, char *errbuf, size_t errlen)
{
	bool negative = buf[*at] == '-';
	size_t d = negative ? *at + 1 : *at, j = d;
	while (j < len && is_digit(buf[j]))
		j++;
	size_t nd = j - d;
	/* Reals pass as they are; so do digits with a leading zero
	 * (jansson's error to report). */
	if (j < len && (buf[j] == '.' || buf[j] == 'e' || buf[j] == 'E')) {
		while (j < len && (is_digit(buf[j]) || buf[j] == '.' || buf[j] == 'e' ||
				   buf[j] == 'E' || buf[j] == '+' || buf[j] == '-'))
			j++;
	} else if (nd >= 2 && buf[d] != '0' && beyond_int64(buf + d, nd, negative) &&
		   edit(buf, len, copy, j - 2, "e2", 2, errbuf, errlen) < 0) {
		return -1;
	}
	*at = j - 1;
	return 0;
}

/*
 * Returns 0 when BUF is nested at most MAX_DEPTH deep and holds no NUL,
 * with *COPY the edited bytes when an edit was made (caller frees), else
 * NULL.
 */
static int scan(const char *buf, size_t len, size_t max_depth, char **copy,
		char *errbuf, size_t errlen)
{
	size_t depth = 0;
	/* The last byte outside strings and whitespace: a value ends at a
	 * quote, a closing bracket, a digit or a literal's last letter. */
	char prev = '\0';
	int rc = 0;
	*copy = NULL;
	for (size_t i = 0; rc >= 0 && i < len; i++) {
		char c = buf[i];
		if (c == '\0') {
			set_err(errbuf, errlen, "NUL byte at byte %zu", i);
			rc = -1;
		} else if (c == '"') {
			rc = skip_string(buf, len, &i, errbuf, errlen);
			prev = '"';
		} else if (is_space(c)) {
			continue;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth) {
				set_err(errbuf, errlen, "nesting deeper than %zu at byte %zu",
					max_depth, i);
				rc = -1;
			}
			prev = c;
		} else if (c == ']' || c == '}') {
			if (depth > 0)
				depth--;
			prev = c;
		} else if (c == ',') {
			rc = trailing_comma(buf, len, i, prev, copy, errbuf, errlen);
			if (rc == 0)
				prev = c;
		} else if (c == '-' || is_digit(c)) {
			rc = number(buf, len, &i, copy, errbuf, errlen);
			prev = '0';
		} else {
			prev = c;
		}
	}
	if (rc >= 0)
		return 0;
	free(*copy);
	*copy = NULL;
	return -1;
}

json_t *cm_json_parse(const char *buf, size_t len, size_t max_depth,
		      char *errbuf, size_t errlen)
{
	char *copy;
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!buf || len == 0) {
		set_err(errbuf, errlen, "empty document");
		return NULL;
	}
	if (scan(buf, len, max_depth, &copy, errbuf, errlen) < 0)
		return NULL;
	json_error_t jerr;
	json_t *root = json_loadb(copy ? copy : buf, len, JSON_DECODE_ANY,
				  &jerr);
	free(copy);
	if (!root && errbuf && errlen)
		snprintf(errbuf, errlen, "%s at line %d column %d (byte %d)",
			 jerr.text, jerr.line, jerr.column, jerr.position);
	return root;
}

/* ---- printing ----------------------------------------------------------- */

static void put_value(cm_buf *t, const json_t *v, size_t depth)
{
	if (depth > CM_JSON_DUMP_DEPTH) {
		t->failed = true;
		return;
	}
	char num[32];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		cm_buf_put(t, "{", 1);
		bool first = true;
		const char *key;
		json_t *member;
		json_object_foreach((json_t *)v, key, member) {
			if (!first)
				cm_buf_put(t, ",", 1);
			first = false;
			cm_json_put_string(t, key, strlen(key));
			cm_buf_put(t, ":", 1);
			put_value(t, member, depth + 1);
		}
		cm_buf_put(t, "}", 1);
		break;
	}
	case JSON_ARRAY: {
		cm_buf_put(t, "[", 1);
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				cm_buf_put(t, ",", 1);
			put_value(t, json_array_get(v, i), depth + 1);
		}
		cm_buf_put(t, "]", 1);
		break;
	}
	case JSON_STRING: cm_json_put_string(t, json_string_value(v), json_string_length(v)); break;
	case JSON_INTEGER: {
		int n = snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		cm_buf_put(t, num, (size_t)n);
		break;
	}
	case JSON_REAL: {
		/* Rare here; jansson's own digits. */
		char *real = json_dumps(v, JSON_ENCODE_ANY);
		if (!real)
			t->failed = true;
		else
			cm_buf_put(t, real, strlen(real));
		free(real);
		break;
	}
	case JSON_TRUE: cm_buf_put(t, "true", 4); break;
	case JSON_FALSE: cm_buf_put(t, "false", 5); break;
	case JSON_NULL: cm_buf_put(t, "null", 4); break;
	}
}

char *cm_json_dump(const json_t *value, size_t *len)
{
	cm_buf t = {0};
	if (value)
		put_value(&t, value, 0);
	cm_buf_put(&t, "", 1); /* the NUL, counted out below */
	if (!value || t.failed) {
		free(t.data);
		return NULL;
	}
	if (len)
		*len = t.len - 1;
	return t.data;
}
