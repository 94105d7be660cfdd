/*
 * kscrash.c — KSCrash reports as Matrix writes its stall dumps (SPEC §4.3):
 * one report object or a JSON array of them.
 *
 * binary_images[] become images (cpu_type/cpu_subtype → arch), every
 * crash.threads[] a thread (backtrace.contents[].instruction_addr with the
 * on-device symbol_name as hint), thread index 0 — or, when no thread has
 * index 0, the one on the main dispatch queue — the main thread. The kind
 * comes from classify(); the rules are in docs/INGEST.md.
 *
 * A "minimal" recrash report (KSCrash's handler crashed while writing)
 * holds only crash.crashed_thread, and the report it was writing under
 * recrash_report: that report lends its system, user and binary_images
 * when the minimal one has none.
 */
#include <string.h>

#include "ingest/field.h"

/* Matrix EDumpType values (WCBlockTypeDef.h). */
#define MATRIX_MIN 2001
#define MATRIX_MAX 2099
#define MATRIX_CPU_BLOCK 2003
#define MATRIX_CPU_INTERVAL_HIGH 2008
#define MATRIX_BLOCK_AND_KILLED 2010
#define MATRIX_POWER_CONSUME 2011
/* Exit reason of a watchdog termination ("ate bad food"). */
#define WATCHDOG_CODE 0x8badf00dLL

/* The first 4-digit Matrix dump type (2001…2099) standing alone in S. */
static int matrix_code_in(const char *s)
{
	for (size_t i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			continue;
		size_t j = i;
		int v = 0;
		while (s[j] >= '0' && s[j] <= '9' && j - i < 5)
			v = v * 10 + (s[j++] - '0');
		bool alone = j - i == 4 && !(s[j] >= '0' && s[j] <= '9');
		if (alone && v >= MATRIX_MIN && v <= MATRIX_MAX)
			return v;
		while (s[j] >= '0' && s[j] <= '9')
			j++;
		i = j - 1;
	}
	return 0;
}

/* A Matrix dump type given as a number or a numeric string. */
static int matrix_code_of(const json_t *v)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		return i >= MATRIX_MIN && i <= MATRIX_MAX ? (int)i : 0;
	}
	if (json_is_string(v))
		return matrix_code_in(json_string_value(v));
	return 0;
}

static int matrix_dump_type(const json_t *report, const json_t *error)
{
	const json_t *ur = json_object_get(error, "user_reported");
	int code = matrix_code_of(json_object_get(ur, "name"));
	if (!code)
		code = matrix_code_of(json_object_get(error, "name"));
	if (!code)
		code = matrix_code_of(json_object_get(report, "dump_type"));
	if (!code)
		code = matrix_code_of(json_object_get(
			json_object_get(report, "report"), "dump_type"));
	if (!code)
		code = matrix_code_of(json_object_get(
			json_object_get(report, "user"), "dump_type"));
	return code;
}

/* Kind and duration of one report (docs/INGEST.md, "KSCrash kinds"). */
static void classify(const json_t *report, ing_kind *kind, int64_t *dur)
{
	const json_t *error =
		json_object_get(json_object_get(report, "crash"), "error");
	const char *type = json_string_value(json_object_get(error, "type"));
	const json_t *hang = json_object_get(error, "hang");
	*dur = -1;
	int code = matrix_dump_type(report, error);
	if (code) {
		if (code == MATRIX_BLOCK_AND_KILLED)
			*kind = ING_KIND_HANG;
		else if (code == MATRIX_CPU_BLOCK ||
			 code == MATRIX_CPU_INTERVAL_HIGH ||
			 code == MATRIX_POWER_CONSUME)
			*kind = ING_KIND_CPU;
		else
			*kind = ING_KIND_STALL;
		return;
	}
	if (json_is_object(hang) || (type && !strcmp(type, "hang"))) {
		json_int_t s = json_integer_value(
			json_object_get(hang, "hang_start_nanos"));
		json_int_t e = json_integer_value(
			json_object_get(hang, "hang_end_nanos"));
		if (s > 0 && e > s)
			*dur = (int64_t)((e - s) / 1000000);
		/* A hang the app came out of is a stall; one that ended in
		 * the watchdog's kill is a hang. */
		bool recovered = (type && !strcmp(type, "hang")) ||
				 json_is_false(json_object_get(error, "is_fatal"));
		*kind = recovered ? ING_KIND_STALL : ING_KIND_HANG;
		return;
	}
	json_int_t exit_code = json_integer_value(
		json_object_get(json_object_get(error, "exit_reason"), "code"));
	if ((type && !strcmp(type, "deadlock")) || exit_code == WATCHDOG_CODE) {
		*kind = ING_KIND_HANG;
		return;
	}
	*kind = ING_KIND_CRASH;
}

/* cpu_type / cpu_subtype: Mach-O writes them as int32 (a subtype with the
 * capability bit set is negative when signed). */
static const char *cpu_value(const json_t *v, uint32_t *out)
{
	if (!json_is_integer(v))
		return "expected an integer";
	json_int_t i = json_integer_value(v);
	if (i < INT32_MIN || i > (json_int_t)UINT32_MAX)
		return "not a 32-bit value";
	*out = (uint32_t)i;
	return NULL;
}

static int parse_image(ing_ctx *c, const json_t *v, const char *where,
		       ing_image *img)
{
	char path[ING_PATH_MAX];
	const char *why;
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_string_field(c, v, where, "name", true, &img->name) < 0 ||
	    ing_uuid_field(c, v, where, "uuid", &img->has_uuid, img->uuid) < 0)
		return -1;
	const json_t *a = ing_get(v, "image_addr");
	ing_path_key(path, sizeof path, where, "image_addr");
	if (!a)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", path);
	if ((why = ing_address_value(a, &img->load_address)))
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", path, why);
	const json_t *sz = ing_get(v, "image_size");
	if (sz) {
		ing_path_key(path, sizeof path, where, "image_size");
		if ((why = ing_address_value(sz, &img->size)))
			return ing_fail(c, ERR_BAD_FIELD, "%s: %s", path, why);
		if (img->size > UINT64_MAX - img->load_address)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s: image_addr + image_size overflows",
					path);
	}
	const json_t *ct = ing_get(v, "cpu_type");
	const json_t *cst = ing_get(v, "cpu_subtype");
	uint32_t type = 0, sub = 0;
	img->arch = SYM_ARCH_UNKNOWN;
	if (ct) {
		if ((why = cpu_value(ct, &type)))
			return ing_fail(c, ERR_BAD_FIELD, "%s: %s",
					ing_path_key(path, sizeof path, where,
						     "cpu_type"),
					why);
		if (cst && (why = cpu_value(cst, &sub)))
			return ing_fail(c, ERR_BAD_FIELD, "%s: %s",
					ing_path_key(path, sizeof path, where,
						     "cpu_subtype"),
					why);
		img->arch = sym_arch_from_cpu(type, sub);
	}
	return 0;
}

static int parse_thread(ing_ctx *c, const json_t *v, const char *where,
			ing_thread *t, json_int_t *index, bool *main_queue)
{
	char path[ING_PATH_MAX], item[ING_PATH_MAX];
	const char *queue;
	*index = -1;
	*main_queue = false;
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_string_field(c, v, where, "name", false, &t->name) < 0 ||
	    ing_string_field(c, v, where, "dispatch_queue", false, &queue) < 0)
		return -1;
	if (queue) {
		*main_queue = !strcmp(queue, "com.apple.main-thread") ||
			      !strcmp(queue, "apple.main-thread");
		if (!t->name)
			t->name = queue;
	}
	const json_t *ix = ing_get(v, "index");
	if (ix) {
		uint64_t u;
		const char *why = ing_uint_value(ix, ING_JSON_INT_MAX, &u);
		if (why)
			return ing_fail(c, ERR_BAD_FIELD, "%s: %s",
					ing_path_key(path, sizeof path, where,
						     "index"),
					why);
		*index = (json_int_t)u;
	}
	const json_t *bt = ing_get(v, "backtrace");
	if (!bt)
		return 0; /* KSCrash leaves out the handler's own thread */
	ing_path_key(path, sizeof path, where, "backtrace");
	if (!json_is_object(bt))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				path);
	const json_t *contents = ing_get(bt, "contents");
	ing_path_key(path, sizeof path, where, "backtrace.contents");
	if (!contents)
		return 0;
	if (ing_stack_alloc(c, contents, path, &t->stack) < 0)
		return -1;
	for (size_t i = 0; i < t->stack.nframes; i++) {
		const json_t *f = json_array_get(contents, i);
		ing_frame *fr = &t->stack.frames[i];
		ing_path_index(item, sizeof item, path, i);
		if (!json_is_object(f))
			return ing_fail(c, ERR_BAD_FIELD,
					"%s: expected an object", item);
		const json_t *a = ing_get(f, "instruction_addr");
		const char *why;
		if (!a)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.instruction_addr: missing", item);
		if ((why = ing_address_value(a, &fr->address)))
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.instruction_addr: %s", item, why);
		if (ing_string_field(c, f, item, "symbol_name", false,
				     &fr->symbol_hint) < 0)
			return -1;
	}
	return 0;
}

/* report.timestamp: RFC 3339 (KSCrash 1.x) or an integer (2.x writes
 * microseconds). Metadata only: an unreadable one is dropped. */
static const char *report_time(ing_ctx *c, const json_t *v)
{
	if (json_is_string(v) && json_string_length(v) <= c->limits->max_string)
		return ing_timestamp_normalize(c, json_string_value(v));
	if (json_is_integer(v)) {
		json_int_t t = json_integer_value(v);
		if (t >= 100000000000000LL)
			t /= 1000000; /* µs */
		else if (t >= 100000000000LL)
			t /= 1000; /* ms */
		return ing_timestamp_from_epoch(c, t);
	}
	return NULL;
}

/* Top-level section KEY of O, else of the recrash report RECRASH (at RW);
 * its path into SW. */
static const json_t *section(const json_t *o, const json_t *recrash, const char *where,
			     const char *rw, const char *key, char sw[ING_PATH_MAX])
{
	const json_t *v = ing_get(o, key);
	ing_path_key(sw, ING_PATH_MAX, where, key);
	if (!v && (v = ing_get(recrash, key)))
		ing_path_key(sw, ING_PATH_MAX, rw, key);
	return v;
}

/* report.id and report.timestamp. */
static int parse_header(ing_ctx *c, const json_t *o, const char *where, ing_report *r)
{
	char sw[ING_PATH_MAX], path[ING_PATH_MAX];
	const json_t *rep = ing_get(o, "report");
	ing_path_key(sw, sizeof sw, where, "report");
	if (!json_is_object(rep))
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", sw,
				rep ? "expected an object" : "missing");
	if (ing_string_field(c, rep, sw, "id", true, &r->report_id) < 0 ||
	    ing_check_report_id(c, r->report_id,
				ing_path_key(path, sizeof path, sw, "id")) < 0)
		return -1;
	r->timestamp = report_time(c, ing_get(rep, "timestamp"));
	if (!r->timestamp && ing_arena_over_limit(c->arena))
		return ing_nomem(c);
	return 0;
}

/* The app and OS dimensions of the system section SYS (at SW; may be NULL). */
static int parse_system(ing_ctx *c, const json_t *sys, const char *sw, ing_report *r)
{
	if (sys && !json_is_object(sys))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", sw);
	const char *sysname = NULL, *os_ignored_version, *os_ignored_build;
	if (sys &&
	    (ing_dimension_field(c, sys, sw, "CFBundleShortVersionString", &r->app_version) < 0 ||
	     ing_string_field(c, sys, sw, "CFBundleVersion", false, &r->build) < 0 ||
	     ing_string_field(c, sys, sw, "system_name", false, &sysname) < 0 ||
	     ing_dimension_field(c, sys, sw, "system_version", &r->os_version) < 0 ||
	     ing_string_field(c, sys, sw, "os_version", false, &r->os_build) < 0 ||
	     ing_dimension_field(c, sys, sw, "machine", &r->device) < 0))
		return -1;
	return ing_os_split(c, sysname, &r->os, &os_ignored_version, &os_ignored_build);
}

/* The user section's user_id (or userId), else the request's. */
static int parse_user(ing_ctx *c, const json_t *user, const char *sw, ing_report *r)
{
	if (json_is_object(user)) {
		if (ing_dimension_field(c, user, sw, "user_id", &r->user_id) < 0)
			return -1;
		if (!r->user_id && ing_dimension_field(c, user, sw, "userId", &r->user_id) < 0)
			return -1;
	}
	if (!r->user_id)
		r->user_id = c->user_id;
	return 0;
}

static int parse_images(ing_ctx *c, const json_t *imgs, const char *sw, ing_report *r)
{
	char item[ING_PATH_MAX];
	if (imgs && !json_is_array(imgs))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an array", sw);
	r->nimages = json_array_size(imgs);
	if (r->nimages > c->limits->max_images)
		return ing_fail(c, ERR_TOO_MANY,
				"%s: %zu images, more than the limit of %zu",
				sw, r->nimages, c->limits->max_images);
	if (!(r->images = ing_arena_calloc(c->arena, r->nimages,
					   sizeof *r->images)))
		return ing_nomem(c);
	for (size_t i = 0; i < r->nimages; i++)
		if (parse_image(c, json_array_get(imgs, i),
				ing_path_index(item, sizeof item, sw, i),
				&r->images[i]) < 0)
			return -1;
	return 0;
}

/* crash.threads at TW: every thread, the one of index 0 main (else the
 * first on the main queue). */
static int parse_threads(ing_ctx *c, const json_t *threads, const char *tw, ing_report *r)
{
	char item[ING_PATH_MAX];
	if (!threads)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", tw);
	if (!json_is_array(threads))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an array", tw);
	size_t n = json_array_size(threads);
	if (ing_threads_alloc(c, n, tw, r) < 0)
		return -1;
	r->nthreads = n;
	size_t by_index = SIZE_MAX, by_queue = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		json_int_t index;
		bool main_queue;
		if (parse_thread(c, json_array_get(threads, i),
				 ing_path_index(item, sizeof item, tw, i),
				 &r->threads[i], &index, &main_queue) < 0)
			return -1;
		if (index == 0 && by_index == SIZE_MAX)
			by_index = i;
		if (main_queue && by_queue == SIZE_MAX)
			by_queue = i;
	}
	if (by_index != SIZE_MAX)
		r->threads[by_index].main = true;
	else if (by_queue != SIZE_MAX)
		r->threads[by_queue].main = true;
	return 0;
}

/* The crash section at where.crash: its threads, or only the crashed one. */
static int parse_crash(ing_ctx *c, const json_t *o, const char *where, ing_report *r)
{
	char sw[ING_PATH_MAX], tw[ING_PATH_MAX];
	const json_t *crash = ing_get(o, "crash");
	ing_path_key(sw, sizeof sw, where, "crash");
	if (!json_is_object(crash))
		return ing_fail(c, ERR_BAD_FIELD, "%s: %s", sw,
				crash ? "expected an object" : "missing");
	const json_t *threads = ing_get(crash, "threads");
	ing_path_key(tw, sizeof tw, sw, "threads");
	if (threads || !ing_get(crash, "crashed_thread"))
		return parse_threads(c, threads, tw, r);
	ing_path_key(tw, sizeof tw, sw, "crashed_thread");
	r->nthreads = 1;
	if (!(r->threads = ing_arena_calloc(c->arena, 1, sizeof *r->threads)))
		return ing_nomem(c);
	json_int_t index;
	bool main_queue;
	if (parse_thread(c, ing_get(crash, "crashed_thread"), tw, &r->threads[0], &index,
			 &main_queue) < 0)
		return -1;
	r->threads[0].main = index == 0 || main_queue;
	return 0;
}

static int parse_report(ing_ctx *c, const json_t *o, const char *where, ing_report *r)
{
	char sw[ING_PATH_MAX], rw[ING_PATH_MAX];
	if (!json_is_object(o))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				*where ? where : "body");
	r->source = "kscrash";
	/* A recrash report stands in for sections the report lacks. */
	const json_t *recrash = ing_get(o, "recrash_report");
	ing_path_key(rw, sizeof rw, where, "recrash_report");
	if (!json_is_object(recrash))
		recrash = NULL;
	if (parse_header(c, o, where, r) < 0)
		return -1;
	const json_t *sys = section(o, recrash, where, rw, "system", sw);
	if (parse_system(c, sys, sw, r) < 0)
		return -1;
	const json_t *user = section(o, recrash, where, rw, "user", sw);
	if (parse_user(c, user, sw, r) < 0)
		return -1;
	classify(o, &r->kind, &r->duration_ms);
	const json_t *imgs = section(o, recrash, where, rw, "binary_images", sw);
	if (parse_images(c, imgs, sw, r) < 0)
		return -1;
	return parse_crash(c, o, where, r);
}

static const char *peek_report_id(ing_ctx *c, const json_t *o)
{
	return ing_peek_id(c, json_object_get(json_object_get(o, "report"), "id"));
}

int ing_parse_kscrash_json(const json_t *root, const ing_limits *limits,
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
	if (!json_is_array(root) && !json_is_object(root)) {
		ing_fail(&c, ERR_BAD_FIELD,
			 "body: expected a KSCrash report object or an array "
			 "of them");
		return ing_batch_abort(&c, b);
	}
	return ing_batch_entries(&c, b, root, json_is_array(root) ? root : NULL,
				 "body", parse_report, peek_report_id, err,
				 out_batch);
}

int ing_parse_kscrash(const char *body, size_t len, const ing_limits *limits,
		      const char *user_id, ing_batch **out_batch,
		      ing_error *err)
{
	return ing_parse_text(ing_parse_kscrash_json, body, len, limits, 0,
			      user_id, out_batch, err);
}
