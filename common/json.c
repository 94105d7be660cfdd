/*
 * json.c — hostile-input JSON parsing on top of jansson (see json.h).
 *
 * jansson checks nesting only against its compile-time limit (2048) and
 * reports it with a generic message, so the bytes are scanned once first:
 * depth is counted on '[' and '{' outside strings (a backslash escapes the
 * next byte inside a string), and a NUL byte anywhere is refused because
 * callers hand the text on to C string functions and PostgreSQL.
 *
 * Duplicate object keys are rejected (JSON_REJECT_DUPLICATES): two parsers
 * reading the same body must not disagree about which value counts, and the
 * MetricKit idempotency hash is computed over the parsed value.
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

/* Returns 0 when BUF is nested at most MAX_DEPTH deep and holds no NUL. */
static int scan(const char *buf, size_t len, size_t max_depth, char *errbuf,
		size_t errlen)
{
	size_t depth = 0;
	int in_string = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (c == 0) {
			set_err(errbuf, errlen, "NUL byte at byte %zu", i);
			return -1;
		}
		if (in_string) {
			if (c == '\\') {
				/* The escaped byte cannot end the string, but
				 * it still must not be a NUL. */
				if (i + 1 < len && buf[i + 1] == '\0') {
					set_err(errbuf, errlen,
						"NUL byte at byte %zu", i + 1);
					return -1;
				}
				i++;
			} else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > max_depth) {
				set_err(errbuf, errlen,
					"nesting deeper than %zu at byte %zu",
					max_depth, i);
				return -1;
			}
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

json_t *cm_json_parse(const char *buf, size_t len, size_t max_depth,
		      char *errbuf, size_t errlen)
{
	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!buf || len == 0) {
		set_err(errbuf, errlen, "empty document");
		return NULL;
	}
	if (scan(buf, len, max_depth, errbuf, errlen) < 0)
		return NULL;
	json_error_t jerr;
	json_t *root = json_loadb(buf, len,
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
				  &jerr);
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
