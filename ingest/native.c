/*
 * native.c — the native v1 format (SPEC §4.1): one report object or
 * {"reports":[…]}. Field by field, and what is required: docs/INGEST.md.
 */
#include <math.h>
#include <string.h>

#include "ingest/field.h"

static int parse_frame(ing_ctx *c, const json_t *v, const char *path,
		       ing_frame *out)
{
	const char *why;
	if (json_is_object(v)) {
		char sub[ING_PATH_MAX];
		const json_t *a = ing_get(v, "address");
		if (!a)
			return ing_fail(c, ERR_BAD_FIELD, "%s: missing",
					ing_path_key(sub, sizeof sub, path,
						     "address"));
		if ((why = ing_address_value(a, &out->address)))
			return ing_fail(c, ERR_BAD_FIELD, "%s: %s",
					ing_path_key(sub, sizeof sub, path,
						     "address"),
					why);
		return ing_string_field(c, v, path, "symbol", false,
					&out->symbol_hint);
	}
	if (!json_is_string(v) && !json_is_number(v))
		return ing_fail(c, ERR_BAD_FIELD,
				"%s: expected an address string or an object",
				path);
	if ((why = ing_address_value(v, &out->address)))
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", path, why);
	return 0;
}

/* V at PATH: an array of at most max_frames frames. */
static int parse_frames(ing_ctx *c, const json_t *v, const char *path,
			ing_stack *out)
{
	if (ing_stack_alloc(c, v, path, out) < 0)
		return -1;
	char sub[ING_PATH_MAX];
	for (size_t i = 0; i < out->nframes; i++)
		if (parse_frame(c, json_array_get(v, i),
				ing_path_index(sub, sizeof sub, path, i),
				&out->frames[i]) < 0)
			return -1;
	return 0;
}

static int parse_image(ing_ctx *c, const json_t *v, const char *where,
		       ing_image *img)
{
	char path[ING_PATH_MAX];
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_string_field(c, v, where, "name", true, &img->name) < 0 ||
	    ing_uuid_field(c, v, where, "uuid", &img->has_uuid, img->uuid) < 0)
		return -1;
	const char *arch;
	if (ing_string_field(c, v, where, "arch", false, &arch) < 0)
		return -1;
	img->arch = SYM_ARCH_UNKNOWN;
	if (arch && (img->arch = sym_arch_parse(arch)) == SYM_ARCH_UNKNOWN)
		return ing_fail(c, ERR_BAD_FIELD,
				"%s: unknown architecture",
				ing_path_key(path, sizeof path, where, "arch"));
	if (ing_image_span(c, v, where, "load_address", img) < 0)
		return -1;
	return 0;
}

static int parse_thread(ing_ctx *c, const json_t *v, const char *where,
			ing_thread *t)
{
	char path[ING_PATH_MAX];
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_string_field(c, v, where, "name", false, &t->name) < 0)
		return -1;
	const json_t *m = ing_get(v, "main");
	if (m && !json_is_boolean(m))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected true or false",
				ing_path_key(path, sizeof path, where, "main"));
	t->main = json_is_true(m);
	const json_t *f = ing_get(v, "frames");
	ing_path_key(path, sizeof path, where, "frames");
	if (!f)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", path);
	return parse_frames(c, f, path, &t->stack);
}

static int parse_sample(ing_ctx *c, const json_t *v, const char *where,
			ing_sample *s)
{
	char path[ING_PATH_MAX];
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	const json_t *t = ing_get(v, "t_ms");
	ing_path_key(path, sizeof path, where, "t_ms");
	if (!t)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", path);
	const char *why;
	uint64_t tms;
	if ((why = ing_uint_value(t, ING_JSON_INT_MAX, &tms)))
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", path, why);
	s->t_ms = (int64_t)tms;
	const json_t *f = ing_get(v, "frames");
	ing_path_key(path, sizeof path, where, "frames");
	if (!f)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", path);
	return parse_frames(c, f, path, &s->stack);
}

/* An array field at WHERE.KEY with at most MAX elements; absent → NULL. */
static int array_field(ing_ctx *c, const json_t *obj, const char *where,
		       const char *key, size_t max, const char *what,
		       bool required, const json_t **out)
{
	char path[ING_PATH_MAX];
	ing_path_key(path, sizeof path, where, key);
	const json_t *v = ing_get(obj, key);
	*out = v;
	if (!v)
		return required ? ing_fail(c, ERR_BAD_FIELD, "%s: missing",
					   path)
				: 0;
	if (!json_is_array(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an array",
				path);
	if (json_array_size(v) > max)
		return ing_fail(c, ERR_TOO_MANY,
				"%s: %zu %s, more than the limit of %zu", path,
				json_array_size(v), what, max);
	return 0;
}

static int parse_duration(ing_ctx *c, const json_t *obj, const char *where,
			  int64_t *out)
{
	char path[ING_PATH_MAX];
	const json_t *v = ing_get(obj, "duration_ms");
	*out = -1;
	if (!v)
		return 0;
	ing_path_key(path, sizeof path, where, "duration_ms");
	if (json_is_real(v)) {
		double d = json_real_value(v);
		if (!(d >= 0 && d <= (double)ING_DURATION_MAX_MS))
			return ing_fail(c, ERR_BAD_FIELD, "%s: expected milliseconds, 0…10^9",
					path);
		*out = (int64_t)floor(d);
		return 0;
	}
	uint64_t u;
	const char *why = ing_uint_value(v, (uint64_t)ING_DURATION_MAX_MS, &u);
	if (why)
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", path, why);
	*out = (int64_t)u;
	return 0;
}

/* The report's own fields: id, dimensions, time, kind and duration. */
static int parse_fields(ing_ctx *c, const json_t *o, const char *where, ing_report *r)
{
	char path[ING_PATH_MAX];
	if (ing_string_field(c, o, where, "report_id", true, &r->report_id) <
		    0 ||
	    ing_check_report_id(c, r->report_id,
			    ing_path_key(path, sizeof path, where,
					 "report_id")) < 0)
		return -1;
	if (ing_dimension_field(c, o, where, "app_version", &r->app_version) < 0 ||
	    ing_string_field(c, o, where, "build", false, &r->build) < 0 ||
	    ing_string_field(c, o, where, "os", false, &r->os) < 0 ||
	    ing_dimension_field(c, o, where, "os_version", &r->os_version) < 0 ||
	    ing_string_field(c, o, where, "os_build", false, &r->os_build) < 0 ||
	    ing_dimension_field(c, o, where, "device", &r->device) < 0 ||
	    ing_dimension_field(c, o, where, "user_id", &r->user_id) < 0 ||
	    ing_string_field(c, o, where, "timestamp", false, &r->timestamp) < 0)
		return -1;
	if (r->timestamp && !ing_is_timestamp(r->timestamp))
		return ing_fail(c, ERR_BAD_FIELD,
				"%s: not an RFC 3339 date-time",
				ing_path_key(path, sizeof path, where,
					     "timestamp"));
	if (!r->user_id)
		r->user_id = c->user_id;
	const char *kind;
	r->kind = ING_KIND_STALL;
	if (ing_string_field(c, o, where, "kind", false, &kind) < 0)
		return -1;
	if (kind && (!ing_kind_parse(kind, &r->kind) || ing_kind_is_android(r->kind)))
		return ing_fail(c, ERR_BAD_FIELD,
				"%s: expected stall, hang, cpu or crash",
				ing_path_key(path, sizeof path, where, "kind"));
	return parse_duration(c, o, where, &r->duration_ms);
}

/* The images, threads and samples arrays, each element parsed. */
static int parse_arrays(ing_ctx *c, const json_t *o, const char *where, ing_report *r)
{
	char path[ING_PATH_MAX];
	const json_t *images, *threads, *samples;
	if (array_field(c, o, where, "images", c->limits->max_images, "images",
			true, &images) < 0 ||
	    array_field(c, o, where, "threads", c->limits->max_threads,
			"threads", true, &threads) < 0 ||
	    array_field(c, o, where, "samples", c->limits->max_samples,
			"samples", false, &samples) < 0)
		return -1;
	if (json_array_size(threads) == 0)
		return ing_fail(c, ERR_BAD_FIELD, "%s: must not be empty",
				ing_path_key(path, sizeof path, where,
					     "threads"));

	char base[ING_PATH_MAX], item[ING_PATH_MAX];
	r->nimages = json_array_size(images);
	r->nthreads = json_array_size(threads);
	r->nsamples = json_array_size(samples); /* 0 when absent */
	r->images = ing_arena_calloc(c->arena, r->nimages, sizeof *r->images);
	r->threads =
		ing_arena_calloc(c->arena, r->nthreads, sizeof *r->threads);
	r->samples =
		ing_arena_calloc(c->arena, r->nsamples, sizeof *r->samples);
	if (!r->images || !r->threads || !r->samples)
		return ing_nomem(c);
	ing_path_key(base, sizeof base, where, "images");
	for (size_t i = 0; i < r->nimages; i++)
		if (parse_image(c, json_array_get(images, i),
				ing_path_index(item, sizeof item, base, i),
				&r->images[i]) < 0)
			return -1;
	ing_path_key(base, sizeof base, where, "threads");
	for (size_t i = 0; i < r->nthreads; i++)
		if (parse_thread(c, json_array_get(threads, i),
				 ing_path_index(item, sizeof item, base, i),
				 &r->threads[i]) < 0)
			return -1;
	ing_path_key(base, sizeof base, where, "samples");
	for (size_t i = 0; i < r->nsamples; i++)
		if (parse_sample(c, json_array_get(samples, i),
				 ing_path_index(item, sizeof item, base, i),
				 &r->samples[i]) < 0)
			return -1;
	return 0;
}

/* One report object at WHERE ("" for a single-report body). */
static int parse_report(ing_ctx *c, const json_t *o, const char *where, ing_report *r)
{
	if (!json_is_object(o))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				*where ? where : "body");
	r->source = "native";
	r->duration_ms = -1;
	if (parse_fields(c, o, where, r) < 0)
		return -1;
	return parse_arrays(c, o, where, r);
}

/* The entry's report_id for a rejection, when it is a usable string. */
static const char *peek_report_id(ing_ctx *c, const json_t *o)
{
	return ing_peek_id(c, json_object_get(o, "report_id"));
}

int ing_parse_native_json(const json_t *root, const ing_limits *limits,
			  const char *user_id, ing_batch **out_batch,
			  ing_error *err)
{
	ing_limits defaults = ing_limits_default();
	ing_ctx c;
	ing_batch *b;
	if (!limits)
		limits = &defaults;
	*out_batch = NULL;
	if (ing_batch_begin(limits, user_id, err, &c, &b) < 0)
		return -1;
	if (!json_is_object(root)) {
		ing_fail(&c, ERR_BAD_FIELD,
			 "body: expected a report object or {\"reports\":[…]}");
		return ing_batch_abort(&c, b);
	}
	const json_t *list = json_object_get(root, "reports");
	/* {"reports":[…]}: a report never has a "reports" field. */
	if (list && !json_is_array(list)) {
		ing_fail(&c, ERR_BAD_FIELD, "reports: expected an array");
		return ing_batch_abort(&c, b);
	}
	return ing_batch_entries(&c, b, root, list, "reports", parse_report,
				 peek_report_id, err, out_batch);
}

int ing_parse_native(const char *body, size_t len, const ing_limits *limits,
		     const char *user_id, ing_batch **out_batch,
		     ing_error *err)
{
	return ing_parse_text(ing_parse_native_json, body, len, limits, 0,
			      user_id, out_batch, err);
}
