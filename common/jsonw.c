/*
 * jsonw.c — JSON text written value by value; see jsonw.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"

/* jansson's escaping: '"', '\\' and bytes below 0x20; the rest as is
 * (its strings are valid UTF-8). */
void cm_json_put_string(cm_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	cm_buf_put(b, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		cm_buf_put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': cm_buf_put(b, "\\\"", 2); break;
		case '\\': cm_buf_put(b, "\\\\", 2); break;
		case '\b': cm_buf_put(b, "\\b", 2); break;
		case '\f': cm_buf_put(b, "\\f", 2); break;
		case '\n': cm_buf_put(b, "\\n", 2); break;
		case '\r': cm_buf_put(b, "\\r", 2); break;
		case '\t': cm_buf_put(b, "\\t", 2); break;
		default: {
			char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			cm_buf_put(b, esc, sizeof esc);
		}
		}
	}
	cm_buf_put(b, s + run, n - run);
	cm_buf_put(b, "\"", 1);
}

/* Before a value or key: the comma that separates it from the previous. */
static void separate(cm_jw *w)
{
	if (w->comma)
		cm_buf_put(&w->buf, ",", 1);
}

static void open_container(cm_jw *w, const char *bracket)
{
	separate(w);
	cm_buf_put(&w->buf, bracket, 1);
	w->comma = false;
}

static void close_container(cm_jw *w, const char *bracket)
{
	cm_buf_put(&w->buf, bracket, 1);
	w->comma = true;
}

void cm_jw_object(cm_jw *w)
{
	open_container(w, "{");
}

void cm_jw_object_end(cm_jw *w)
{
	close_container(w, "}");
}

void cm_jw_array(cm_jw *w)
{
	open_container(w, "[");
}

void cm_jw_array_end(cm_jw *w)
{
	close_container(w, "]");
}

void cm_jw_key(cm_jw *w, const char *key)
{
	separate(w);
	cm_buf_put(&w->buf, "\"", 1);
	cm_buf_put(&w->buf, key, strlen(key));
	cm_buf_put(&w->buf, "\":", 2);
	w->comma = false;
}

void cm_jw_raw(cm_jw *w, const char *json, size_t n)
{
	separate(w);
	cm_buf_put(&w->buf, json, n);
	w->comma = true;
}

void cm_jw_stringn(cm_jw *w, const char *s, size_t n)
{
	separate(w);
	cm_json_put_string(&w->buf, s, n);
	w->comma = true;
}

void cm_jw_string(cm_jw *w, const char *s)
{
	if (s)
		cm_jw_stringn(w, s, strlen(s));
	else
		cm_jw_null(w);
}

void cm_jw_optional_string(cm_jw *w, const char *key, const char *s)
{
	if (!s)
		return;
	cm_jw_key(w, key);
	cm_jw_string(w, s);
}

void cm_jw_int(cm_jw *w, int64_t v)
{
	char digits[24];
	size_t i = sizeof digits;
	/* Through the unsigned magnitude, so INT64_MIN needs no special case. */
	uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	do {
		digits[--i] = (char)('0' + m % 10);
		m /= 10;
	} while (m);
	if (v < 0)
		digits[--i] = '-';
	cm_jw_raw(w, digits + i, sizeof digits - i);
}

void cm_jw_hex(cm_jw *w, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char text[21];
	size_t i = sizeof text;
	text[--i] = '"';
	do {
		text[--i] = hex[v & 15];
		v >>= 4;
	} while (v);
	text[--i] = 'x';
	text[--i] = '0';
	text[--i] = '"';
	cm_jw_raw(w, text + i, sizeof text - i);
}

/* V as cm_jw_real writes it into TEXT (CM_JW_REAL_MAX bytes); its length,
 * or 0 when V is not finite or does not fit. */
static size_t real_text(double v, char *text)
{
	if (!isfinite(v))
		return 0;
	int n = snprintf(text, CM_JW_REAL_MAX - 2, "%.17g", v);
	if (n < 0 || (size_t)n >= CM_JW_REAL_MAX - 2)
		return 0;
	char *e = strchr(text, 'e');
	if (e) { /* jansson writes e-5 and e5 where printf writes e-05, e+05 */
		char *digits = e + 1 + (e[1] == '-' || e[1] == '+'),
		     *to = e[1] == '-' ? e + 2 : e + 1;
		while (*digits == '0' && digits[1])
			digits++;
		memmove(to, digits, strlen(digits) + 1);
		n = (int)strlen(text);
	} else if (!strchr(text, '.')) {
		text[n++] = '.';
		text[n++] = '0';
	}
	return (size_t)n;
}

void cm_jw_real(cm_jw *w, double v)
{
	char text[CM_JW_REAL_MAX];
	size_t n = real_text(v, text);
	if (n)
		cm_jw_raw(w, text, n);
	else
		cm_jw_null(w);
}

void cm_jw_real_memoized(cm_jw *w, cm_jw_real_memo *m, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	size_t slot = (size_t)((bits * 0x9e3779b97f4a7c15u) >> (64 - CM_JW_REAL_MEMO_BITS));
	if (!m->len[slot] || m->bits[slot] != bits) {
		size_t n = real_text(v, m->text[slot]);
		if (!n) {
			cm_jw_null(w);
			return;
		}
		m->bits[slot] = bits;
		m->len[slot] = (uint8_t)n;
	}
	cm_jw_raw(w, m->text[slot], m->len[slot]);
}

void cm_jw_bool(cm_jw *w, bool v)
{
	cm_jw_raw(w, v ? "true" : "false", v ? 4 : 5);
}

void cm_jw_null(cm_jw *w)
{
	cm_jw_raw(w, "null", 4);
}

void cm_jw_line_end(cm_jw *w)
{
	cm_buf_put(&w->buf, "\n", 1);
	w->comma = false;
}

char *cm_jw_finish(cm_jw *w, size_t *len)
{
	cm_buf_put(&w->buf, "", 1);
	char *text = w->buf.failed ? NULL : w->buf.data;
	if (!text)
		free(w->buf.data);
	else if (len)
		*len = w->buf.len - 1;
	memset(w, 0, sizeof *w);
	return text;
}
