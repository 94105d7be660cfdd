/*
 * field.c — field readers and batch scaffolding shared by the parsers
 * (see field.h). Every reader names the failing field by its path.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/hex.h"
#include "common/json.h"
#include "common/utf8.h"
#include "ingest/field.h"

int ing_fail(ing_ctx *ctx, cm_err code, const char *fmt, ...)
{
	ing_error *err = ctx->err;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return -1;
}

int ing_nomem(ing_ctx *ctx)
{
	ctx->fatal = true;
	if (ing_arena_over_limit(ctx->arena))
		return ing_fail(ctx, ERR_BODY_TOO_LARGE,
				"body: the reports need more than %zu bytes",
				ctx->limits->max_memory);
	return ing_fail(ctx, ERR_INTERNAL, "out of memory");
}

const char *ing_path_key(char *buf, size_t n, const char *where,
			 const char *key)
{
	snprintf(buf, n, "%s%s%s", where, *where ? "." : "", key);
	return buf;
}

const char *ing_path_index(char *buf, size_t n, const char *where,
			   size_t index)
{
	snprintf(buf, n, "%s[%zu]", where, index);
	return buf;
}

int ing_check_report_id(ing_ctx *ctx, const char *id, const char *path)
{
	size_t n = strlen(id);
	if (n > ING_REPORT_ID_MAX)
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: longer than %d bytes",
				path, ING_REPORT_ID_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)id[i] <= 0x20 || (unsigned char)id[i] >= 0x7f)
			return ing_fail(ctx, ERR_BAD_FIELD,
					"%s: only printable ASCII without "
					"spaces is allowed",
					path);
	return 0;
}

const json_t *ing_get(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);
	return json_is_null(v) ? NULL : v;
}

/* ing_string_value with MAX bytes as the limit. */
static int string_value_max(ing_ctx *ctx, const json_t *v, const char *path, bool required,
			    size_t max, const char **out)
{
	*out = NULL;
	if (!json_is_string(v))
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: expected a string",
				path);
	size_t len = json_string_length(v);
	if (len > max)
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: longer than %zu bytes", path, max);
	if (len == 0) {
		if (required)
			return ing_fail(ctx, ERR_BAD_FIELD,
					"%s: must not be empty", path);
		return 0;
	}
	/* jansson refuses \u0000 without JSON_ALLOW_NUL, so the length is
	 * the C string's length. */
	char *s = ing_arena_strndup(ctx->arena, json_string_value(v), len);
	if (!s)
		return ing_nomem(ctx);
	*out = s;
	return 0;
}

int ing_string_value(ing_ctx *ctx, const json_t *v, const char *path, bool required,
		     const char **out)
{
	return string_value_max(ctx, v, path, required, ctx->limits->max_string, out);
}

int ing_string_field(ing_ctx *ctx, const json_t *obj, const char *where,
		     const char *key, bool required, const char **out)
{
	char path[ING_PATH_MAX];
	const json_t *v = ing_get(obj, key);
	*out = NULL;
	if (!v) {
		if (required)
			return ing_fail(ctx, ERR_BAD_FIELD, "%s: missing",
					ing_path_key(path, sizeof path, where,
						     key));
		return 0;
	}
	return ing_string_value(ctx, v,
				ing_path_key(path, sizeof path, where, key),
				required, out);
}

int ing_dimension_field(ing_ctx *ctx, const json_t *obj, const char *where, const char *key,
			const char **out)
{
	char path[ING_PATH_MAX];
	const json_t *v = ing_get(obj, key);
	*out = NULL;
	return v ? string_value_max(ctx, v, ing_path_key(path, sizeof path, where, key), false,
				    ctx->limits->max_dimension, out)
		 : 0;
}

const char *ing_address_value(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < 0)
			return "negative address";
		if ((uint64_t)i > ING_JSON_INT_MAX)
			return "JSON number above 2^53 (send a hex string)";
		*out = (uint64_t)i;
		return NULL;
	}
	/* An integer beyond 64 bits arrives as a real (common/json.h). */
	if (json_is_real(v))
		return json_real_value(v) > (double)ING_JSON_INT_MAX
			       ? "JSON number above 2^53 (send a hex string)"
			       : "not an integer address";
	if (!json_is_string(v))
		return "not a hex address string";
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	uint64_t val = 0;
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		size_t i = 2;
		while (i < len && s[i] == '0')
			i++;
		if (len - i > 16)
			return "hex address wider than 64 bits";
		for (; i < len; i++) {
			int h = cm_hex_digit((unsigned char)s[i]);
			if (h < 0)
				return "not a hex address string";
			val = val << 4 | (uint64_t)h;
		}
		*out = val;
		return NULL;
	}
	if (len == 0 || len > 20)
		return "not a hex address string";
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return "not a hex address string";
		uint64_t d = (uint64_t)(s[i] - '0');
		if (val > (UINT64_MAX - d) / 10)
			return "decimal address wider than 64 bits";
		val = val * 10 + d;
	}
	*out = val;
	return NULL;
}

const char *ing_uint_value(const json_t *v, uint64_t max, uint64_t *out)
{
	if (json_is_real(v) && json_real_value(v) > (double)max)
		return max == ING_JSON_INT_MAX ? "above 2^53" : "too large";
	if (!json_is_integer(v))
		return "expected an integer";
	json_int_t i = json_integer_value(v);
	if (i < 0)
		return "must not be negative";
	if ((uint64_t)i > max)
		return max == ING_JSON_INT_MAX ? "above 2^53" : "too large";
	*out = (uint64_t)i;
	return NULL;
}

int ing_uuid_field(ing_ctx *ctx, const json_t *obj, const char *where,
		   const char *key, bool *has, uint8_t out[16])
{
	char path[ING_PATH_MAX];
	const json_t *v = ing_get(obj, key);
	*has = false;
	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) > 64 ||
	    !sym_uuid_parse(json_string_value(v), out))
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: not a UUID",
				ing_path_key(path, sizeof path, where, key));
	*has = true;
	return 0;
}

/* Reads exactly N digits at *P into *OUT. */
static bool digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

typedef struct ts_parts {
	int year, mon, day, hour, min, sec;
	const char *frac; /* digits after '.', or NULL */
	size_t frac_len;
	char tz[16];      /* "Z" or "+HH:MM" */
} ts_parts;

static bool days_ok(int year, int mon, int day)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30,
				    31, 31, 30, 31, 30, 31};
	if (mon < 1 || mon > 12 || day < 1 || day > mdays[mon - 1])
		return false;
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	return !(mon == 2 && day == 29 && !leap);
}

/*
 * Parses "YYYY-MM-DD<SEP>HH:MM:SS[.frac]<zone>". STRICT: SEP 'T' and zone
 * "Z" or "±HH:MM". Otherwise SEP ' ' and zone absent (UTC), " ±HHMM" or
 * " ±HH:MM".
 */
static bool ts_parse(const char *s, bool strict, ts_parts *t)
{
	const char *p = s;
	memset(t, 0, sizeof *t);
	if (!digits(&p, 4, &t->year) || *p++ != '-' ||
	    !digits(&p, 2, &t->mon) || *p++ != '-' ||
	    !digits(&p, 2, &t->day))
		return false;
	if (*p != (strict ? 'T' : ' '))
		return false;
	p++;
	if (!digits(&p, 2, &t->hour) || *p++ != ':' ||
	    !digits(&p, 2, &t->min) || *p++ != ':' ||
	    !digits(&p, 2, &t->sec))
		return false;
	if (!days_ok(t->year, t->mon, t->day) || t->hour > 23 ||
	    t->min > 59 || t->sec > 60)
		return false;
	if (*p == '.') {
		p++;
		t->frac = p;
		while (*p >= '0' && *p <= '9')
			p++;
		t->frac_len = (size_t)(p - t->frac);
		if (t->frac_len == 0 || t->frac_len > 9)
			return false;
	}
	if (strict) {
		if (*p == 'Z') {
			strcpy(t->tz, "Z");
			return p[1] == '\0';
		}
	} else {
		if (*p == '\0') {
			strcpy(t->tz, "Z");
			return true;
		}
		if (*p++ != ' ')
			return false;
	}
	if (*p != '+' && *p != '-')
		return false;
	char sign = *p++;
	int hh, mm;
	if (!digits(&p, 2, &hh))
		return false;
	if (*p == ':')
		p++;
	else if (strict)
		return false;
	if (!digits(&p, 2, &mm) || *p != '\0' || hh > 23 || mm > 59)
		return false;
	t->tz[0] = sign;
	t->tz[1] = (char)('0' + hh / 10);
	t->tz[2] = (char)('0' + hh % 10);
	t->tz[3] = ':';
	t->tz[4] = (char)('0' + mm / 10);
	t->tz[5] = (char)('0' + mm % 10);
	t->tz[6] = '\0';
	return true;
}

bool ing_is_timestamp(const char *text)
{
	ts_parts t;
	return text && ts_parse(text, true, &t);
}

const char *ing_timestamp_normalize(ing_ctx *ctx, const char *text)
{
	ts_parts t;
	if (!text)
		return NULL;
	if (ts_parse(text, true, &t))
		return ing_arena_strdup(ctx->arena, text);
	if (!ts_parse(text, false, &t))
		return NULL;
	char buf[128];
	snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d%s%.*s%s",
		 t.year, t.mon, t.day, t.hour, t.min, t.sec,
		 t.frac ? "." : "", (int)t.frac_len, t.frac ? t.frac : "",
		 t.tz);
	return ing_arena_strdup(ctx->arena, buf);
}

const char *ing_timestamp_from_epoch(ing_ctx *ctx, int64_t seconds)
{
	/* Years 1970…9999 keep the four-digit form valid. */
	if (seconds < 0 || seconds > 253402300799)
		return NULL;
	time_t tt = (time_t)seconds;
	struct tm tm;
	if (!gmtime_r(&tt, &tm))
		return NULL;
	char buf[32];
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return ing_arena_strdup(ctx->arena, buf);
}

int ing_os_split(ing_ctx *ctx, const char *text, const char **os,
		 const char **version, const char **build)
{
	*os = *version = *build = NULL;
	if (!text)
		return 0;
	size_t len = strlen(text);
	const char *open = strchr(text, '(');
	size_t head = open ? (size_t)(open - text) : len;
	if (open) {
		const char *close = strchr(open, ')');
		size_t blen = close ? (size_t)(close - open - 1)
				    : strlen(open + 1);
		if (blen) {
			if (!(*build = ing_arena_strndup(ctx->arena, open + 1,
							 blen)))
				return ing_nomem(ctx);
		}
	}
	while (head && text[head - 1] == ' ')
		head--;
	/* The version is the last space-separated token when it starts with
	 * a digit; the name is what precedes it. */
	size_t vstart = head;
	while (vstart && text[vstart - 1] != ' ')
		vstart--;
	size_t name_end = head;
	if (vstart < head && isdigit((unsigned char)text[vstart])) {
		if (!(*version = ing_arena_strndup(ctx->arena, text + vstart,
						   head - vstart)))
			return ing_nomem(ctx);
		name_end = vstart;
		while (name_end && text[name_end - 1] == ' ')
			name_end--;
	}
	if (!name_end)
		return 0;
	static const struct {
		const char *from, *to;
	} names[] = {{"iPhone OS", "iOS"},
		     {"iOS", "iOS"},
		     {"Mac OS X", "macOS"},
		     {"OS X", "macOS"},
		     {"macOS", "macOS"}};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strlen(names[i].from) == name_end &&
		    !memcmp(names[i].from, text, name_end)) {
			*os = names[i].to;
			return 0;
		}
	}
	if (!(*os = ing_arena_strndup(ctx->arena, text, name_end)))
		return ing_nomem(ctx);
	return 0;
}

int ing_batch_begin(const ing_limits *limits, const char *user_id,
		    ing_error *err, ing_ctx *ctx, ing_batch **out)
{
	*out = NULL;
	memset(ctx, 0, sizeof *ctx);
	ctx->limits = limits;
	ctx->err = err;
	ctx->arena = ing_arena_new(limits->max_memory);
	if (!ctx->arena)
		return ing_error_set(err, ERR_INTERNAL, "out of memory");
	ing_batch *b = ing_arena_alloc(ctx->arena, sizeof *b);
	if (!b) {
		ing_nomem(ctx);
		return ing_batch_abort(ctx, NULL);
	}
	b->arena = ctx->arena;
	if (user_id && *user_id) {
		size_t ulen = strlen(user_id);
		if (ulen > limits->max_dimension) {
			ing_fail(ctx, ERR_BAD_FIELD, "X-Stallscope-User: longer than %zu bytes",
				 limits->max_dimension);
			return ing_batch_abort(ctx, b);
		}
		/* A header is raw bytes; everything else of a report came
		 * through jansson, which checks UTF-8. */
		if (!cm_utf8_valid(user_id)) {
			ing_fail(ctx, ERR_BAD_FIELD, "X-Stallscope-User: not valid UTF-8");
			return ing_batch_abort(ctx, b);
		}
		if (!(ctx->user_id = ing_arena_strndup(ctx->arena, user_id,
						       ulen))) {
			ing_nomem(ctx);
			return ing_batch_abort(ctx, b);
		}
	}
	*out = b;
	return 0;
}

int ing_batch_reserve(ing_ctx *ctx, ing_batch *batch, size_t n)
{
	batch->entries = ing_arena_calloc(ctx->arena, n, sizeof(ing_entry));
	if (!batch->entries)
		return ing_nomem(ctx);
	batch->nentries = 0;
	return 0;
}

int ing_batch_abort(ing_ctx *ctx, ing_batch *batch)
{
	(void)batch; /* lives in the arena */
	ing_arena_free(ctx->arena);
	ctx->arena = NULL;
	return -1;
}

void ing_batch_free(ing_batch *batch)
{
	if (batch)
		ing_arena_free(batch->arena);
}

int ing_stack_alloc(ing_ctx *ctx, const json_t *v, const char *path,
		    ing_stack *s)
{
	if (!json_is_array(v))
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: expected an array", path);
	size_t n = json_array_size(v);
	if (n > ctx->limits->max_frames)
		return ing_fail(ctx, ERR_TOO_MANY,
				"%s: %zu frames, more than the limit of %zu",
				path, n, ctx->limits->max_frames);
	s->nframes = n;
	if (!(s->frames = ing_arena_calloc(ctx->arena, n, sizeof(ing_frame))))
		return ing_nomem(ctx);
	return 0;
}

int ing_threads_alloc(ing_ctx *ctx, size_t n, const char *path, ing_report *r)
{
	if (n == 0)
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: must not be empty", path);
	if (n > ctx->limits->max_threads)
		return ing_fail(ctx, ERR_TOO_MANY, "%s: %zu threads, more than the limit of %zu",
				path, n, ctx->limits->max_threads);
	if (!(r->threads = ing_arena_calloc(ctx->arena, n, sizeof *r->threads)))
		return ing_nomem(ctx);
	return 0;
}

int ing_image_span(ing_ctx *ctx, const json_t *v, const char *where,
		   const char *addr_key, ing_image *img)
{
	char path[ING_PATH_MAX];
	const char *why;
	const json_t *la = ing_get(v, addr_key);
	ing_path_key(path, sizeof path, where, addr_key);
	if (!la)
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: missing", path);
	if ((why = ing_address_value(la, &img->load_address)))
		return ing_fail(ctx, ERR_BAD_FIELD, "%s: %s", path, why);
	const json_t *sz = ing_get(v, "size");
	if (sz) {
		ing_path_key(path, sizeof path, where, "size");
		if ((why = ing_address_value(sz, &img->size)))
			return ing_fail(ctx, ERR_BAD_FIELD, "%s: %s", path, why);
		if (img->size > UINT64_MAX - img->load_address)
			return ing_fail(ctx, ERR_BAD_FIELD, "%s: %s + size overflows",
					path, addr_key);
	}
	return 0;
}

const char *ing_peek_id(ing_ctx *ctx, const json_t *v)
{
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) > ING_REPORT_ID_MAX)
		return NULL;
	return ing_arena_strdup(ctx->arena, json_string_value(v));
}

int ing_batch_entries(ing_ctx *ctx, ing_batch *b, const json_t *root,
		      const json_t *list, const char *label,
		      ing_entry_parse_fn parse, ing_entry_id_fn peek,
		      ing_error *err, ing_batch **out_batch)
{
	size_t n = 1;
	if (list) {
		n = json_array_size(list);
		if (n == 0) {
			ing_fail(ctx, ERR_BAD_FIELD, "%s: empty batch", label);
			return ing_batch_abort(ctx, b);
		}
		if (n > ctx->limits->max_reports) {
			ing_fail(ctx, ERR_TOO_MANY,
				 "%s: %zu reports, more than the limit of %zu",
				 label, n, ctx->limits->max_reports);
			return ing_batch_abort(ctx, b);
		}
		b->is_batch = true;
	}
	if (ing_batch_reserve(ctx, b, n) < 0)
		return ing_batch_abort(ctx, b);
	for (size_t i = 0; i < n; i++) {
		const json_t *o = list ? json_array_get(list, i) : root;
		char where[ING_PATH_MAX] = "";
		if (list)
			ing_path_index(where, sizeof where, label, i);
		ing_entry *e = &b->entries[b->nentries++];
		/* Failures outside the entry's own parse are the body's. */
		ctx->err = err;
		ing_report *r = ing_arena_alloc(ctx->arena, sizeof *r);
		if (!r) {
			ing_nomem(ctx);
			return ing_batch_abort(ctx, b);
		}
		ctx->err = &e->error;
		if (parse(ctx, o, where, r) < 0) {
			if (ctx->fatal) {
				*err = e->error;
				return ing_batch_abort(ctx, b);
			}
			e->report_id = peek(ctx, o);
			continue;
		}
		e->report = r;
		e->report_id = r->report_id;
		e->error.code = ERR_NONE;
	}
	*out_batch = b;
	return 0;
}

int ing_parse_text(ing_json_parse_fn parse, const char *body, size_t len,
		   const ing_limits *limits, size_t max_depth,
		   const char *user_id, ing_batch **out_batch, ing_error *err)
{
	ing_limits defaults = ing_limits_default();
	if (!limits)
		limits = &defaults;
	*out_batch = NULL;
	json_t *root = ing_json_load(body, len, max_depth ? max_depth : limits->max_depth, err);
	if (!root)
		return -1;
	int rc = parse(root, limits, user_id, out_batch, err);
	json_decref(root);
	return rc;
}

json_t *ing_json_load(const char *body, size_t len, size_t max_depth,
		      ing_error *err)
{
	char why[200];
	if (!body || len == 0) {
		ing_error_set(err, ERR_EMPTY_BODY, "body: empty");
		return NULL;
	}
	json_t *root = cm_json_parse(body, len, max_depth, why, sizeof why);
	if (!root)
		ing_error_set(err, ERR_BAD_JSON, "body: %s", why);
	return root;
}
