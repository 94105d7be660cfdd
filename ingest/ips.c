/*
 * ips.c — Apple .ips crash/hang files (iOS 15+ / macOS 12+ JSON form,
 * SPEC §4.3): a one-line JSON header, a newline, then a JSON body.
 *
 * Crash-shaped bodies: usedImages[] become images (base, size, uuid,
 * name/path, arch); every threads[] element a thread whose frames are
 * usedImages[imageIndex].base + imageOffset, with the frame's symbol as
 * hint. The thread on the com.apple.main-thread queue is the main thread,
 * else the triggered one.
 *
 * Stackshot-shaped bodies (bug_type 409, a watchdog's kill): the killed
 * process's threadById[] under stackshot.processByPid become threads whose
 * userFrames [imageIndex, offset] index stackshot.binaryImages
 * [uuid, base, source].
 *
 * The header's bug_type (Apple's OSAnalytics type table) and the
 * termination code give the kind; types that are no stall, hang or crash
 * of the app, or whose body is text, are refused by name (docs/INGEST.md).
 * incident_id is the report id. A hang's duration is the watchdog's time
 * allowance its termination reason names, when it names one.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "ingest/field.h"

#define WATCHDOG_CODE 0x8badf00dLL

/* Apple's OSAnalytics type table, the rows apps meet: those read... */
static const struct {
	const char *bug_type;
	ing_kind kind;
} ips_read[] = {
	{"309", ING_KIND_CRASH},
	{"109", ING_KIND_CRASH}, /* its pre-JSON number, sometimes kept */
	{"409", ING_KIND_HANG},  /* SystemWatchdogCrash: killed while hung */
	{"hang", ING_KIND_HANG},
};

/* ...and those refused, with the reason the rejection gives. */
static const struct {
	const char *bug_type, *why;
} ips_refused[] = {
	{"298", "a Jetsam event (memory pressure), not a stall"},
	{"222", "a long run-loop hang, whose body is text (spindump), not JSON"},
	{"223", "a short run-loop hang, whose body is text (spindump), not JSON"},
	{"228", "a third-party hang, whose body is text (spindump), not JSON"},
	{"288", "a system-wide stackshot, not an app's report"},
};

/* The kind BUG is read as; false when it is refused. */
static bool kind_of(const char *bug, ing_kind *kind)
{
	for (size_t k = 0; k < sizeof ips_read / sizeof ips_read[0]; k++)
		if (!strcmp(ips_read[k].bug_type, bug)) {
			*kind = ips_read[k].kind;
			return true;
		}
	return false;
}

static const char *refusal_of(const char *bug)
{
	for (size_t k = 0; k < sizeof ips_refused / sizeof ips_refused[0]; k++)
		if (!strcmp(ips_refused[k].bug_type, bug))
			return ips_refused[k].why;
	return NULL;
}

/* bug_type as text: "309" or 309. */
static bool bug_type_text(const json_t *v, char out[16])
{
	if (json_is_string(v) && json_string_length(v) < 16) {
		strcpy(out, json_string_value(v));
		return true;
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) < 1000000) {
		snprintf(out, 16, "%lld", (long long)json_integer_value(v));
		return true;
	}
	return false;
}

static int parse_image(ing_ctx *c, const json_t *v, const char *where,
		       ing_image *img)
{
	const char *name, *ipath, *arch;
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_uuid_field(c, v, where, "uuid", &img->has_uuid, img->uuid) <
		    0 ||
	    ing_string_field(c, v, where, "name", false, &name) < 0 ||
	    ing_string_field(c, v, where, "path", false, &ipath) < 0 ||
	    ing_string_field(c, v, where, "arch", false, &arch) < 0)
		return -1;
	static const uint8_t zero[16];
	if (img->has_uuid && !memcmp(img->uuid, zero, 16))
		img->has_uuid = false; /* placeholder for an unknown image */
	img->name = ipath ? ipath : name ? name : "???";
	img->arch = sym_arch_parse(arch);
	if (ing_image_span(c, v, where, "base", img) < 0)
		return -1;
	return 0;
}

static int parse_thread(ing_ctx *c, const json_t *v, const char *where,
			const ing_report *r, ing_thread *t, bool *triggered,
			bool *main_queue)
{
	char path[ING_PATH_MAX], item[ING_PATH_MAX];
	const char *queue;
	*triggered = *main_queue = false;
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_string_field(c, v, where, "name", false, &t->name) < 0 ||
	    ing_string_field(c, v, where, "queue", false, &queue) < 0)
		return -1;
	if (queue) {
		*main_queue = !strcmp(queue, "com.apple.main-thread");
		if (!t->name)
			t->name = queue;
	}
	const json_t *tr = ing_get(v, "triggered");
	if (tr && !json_is_boolean(tr))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected true or false",
				ing_path_key(path, sizeof path, where,
					     "triggered"));
	*triggered = json_is_true(tr);
	const json_t *frames = ing_get(v, "frames");
	ing_path_key(path, sizeof path, where, "frames");
	if (!frames)
		return 0;
	if (ing_stack_alloc(c, frames, path, &t->stack) < 0)
		return -1;
	for (size_t i = 0; i < t->stack.nframes; i++) {
		const json_t *f = json_array_get(frames, i);
		ing_frame *fr = &t->stack.frames[i];
		const char *why;
		uint64_t index, off;
		ing_path_index(item, sizeof item, path, i);
		if (!json_is_object(f))
			return ing_fail(c, ERR_BAD_FIELD,
					"%s: expected an object", item);
		const json_t *ji = ing_get(f, "imageIndex");
		const json_t *jo = ing_get(f, "imageOffset");
		if (!ji)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.imageIndex: missing", item);
		if ((why = ing_uint_value(ji, ING_JSON_INT_MAX, &index)))
			return ing_fail(c, ERR_BAD_FIELD, "%s.imageIndex: %s",
					item, why);
		if (index >= r->nimages)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.imageIndex: %llu is not an index "
					"of usedImages (%zu images)",
					item, (unsigned long long)index,
					r->nimages);
		if (!jo)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.imageOffset: missing", item);
		if ((why = ing_uint_value(jo, ING_JSON_INT_MAX, &off)))
			return ing_fail(c, ERR_BAD_FIELD, "%s.imageOffset: %s",
					item, why);
		uint64_t base = r->images[index].load_address;
		if (off > UINT64_MAX - base)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.imageOffset: base + offset "
					"overflows",
					item);
		fr->address = base + off;
		if (ing_string_field(c, f, item, "symbol", false,
				     &fr->symbol_hint) < 0)
			return -1;
	}
	return 0;
}

/*
 * Stackshot images: binaryImages[] lists every image of the system (the
 * kernel's too, at bases above 2^63), so only those the process's user
 * frames use become the report's images, in order of first use.
 */
typedef struct stackshot_images {
	const json_t *list; /* binaryImages */
	const char *path;   /* its path, for messages */
	size_t *slot;       /* per list entry: report image index + 1, or 0 */
} stackshot_images;

/* The report image for binaryImages[INDEX] ([uuid, base, source, …]),
 * added on first use. NULL on failure. */
static ing_image *stackshot_image(ing_ctx *c, stackshot_images *si,
				  uint64_t index, const char *item,
				  ing_report *r)
{
	char where[ING_PATH_MAX];
	size_t n = json_array_size(si->list);
	const char *why;
	if (index >= n) {
		ing_fail(c, ERR_BAD_FIELD,
			 "%s[0]: %llu is not an index of binaryImages (%zu "
			 "images)",
			 item, (unsigned long long)index, n);
		return NULL;
	}
	if (si->slot[index])
		return &r->images[si->slot[index] - 1];
	ing_path_index(where, sizeof where, si->path, (size_t)index);
	if (r->nimages == c->limits->max_images) {
		ing_fail(c, ERR_TOO_MANY,
			 "%s: more than the limit of %zu images used",
			 si->path, c->limits->max_images);
		return NULL;
	}
	ing_image *img = &r->images[r->nimages];
	const json_t *v = json_array_get(si->list, (size_t)index);
	if (!json_is_array(v) || json_array_size(v) < 2) {
		ing_fail(c, ERR_BAD_FIELD, "%s: expected [uuid, base, source]",
			 where);
		return NULL;
	}
	const json_t *u = json_array_get(v, 0);
	if (!json_is_string(u) || json_string_length(u) > 64 ||
	    !sym_uuid_parse(json_string_value(u), img->uuid)) {
		ing_fail(c, ERR_BAD_FIELD, "%s[0]: not a UUID", where);
		return NULL;
	}
	static const uint8_t zero[16];
	img->has_uuid = memcmp(img->uuid, zero, 16) != 0;
	/* No name is given: the UUID keeps grouping identities stable. */
	if (!(img->name = ing_arena_strdup(c->arena, json_string_value(u)))) {
		ing_nomem(c);
		return NULL;
	}
	img->arch = SYM_ARCH_UNKNOWN;
	if ((why = ing_address_value(json_array_get(v, 1), &img->load_address))) {
		ing_fail(c, ERR_BAD_FIELD, "%s[1]: %s", where, why);
		return NULL;
	}
	si->slot[index] = ++r->nimages;
	return img;
}

/* threadById[] entry V: userFrames [[imageIndex, offset], …], innermost
 * first. Each image's size grows to cover its frames (a lower bound). */
static int parse_stackshot_thread(ing_ctx *c, const json_t *v,
				  const char *where, stackshot_images *si,
				  ing_report *r, ing_thread *t)
{
	char path[ING_PATH_MAX], item[ING_PATH_MAX];
	const char *queue, *label;
	if (!json_is_object(v))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object",
				where);
	if (ing_string_field(c, v, where, "name", false, &t->name) < 0 ||
	    ing_string_field(c, v, where, "queue", false, &queue) < 0 ||
	    ing_string_field(c, v, where, "dispatch_queue_label", false,
			     &label) < 0)
		return -1;
	if (!queue)
		queue = label;
	static const char main_queue[] = "com.apple.main-thread";
	t->main = (queue && !strcmp(queue, main_queue)) ||
		  (t->name && !strcmp(t->name, main_queue));
	if (!t->name)
		t->name = queue;
	const json_t *frames = ing_get(v, "userFrames");
	ing_path_key(path, sizeof path, where, "userFrames");
	if (!frames)
		return 0; /* a kernel-only thread */
	if (ing_stack_alloc(c, frames, path, &t->stack) < 0)
		return -1;
	for (size_t i = 0; i < t->stack.nframes; i++) {
		const json_t *f = json_array_get(frames, i);
		const char *why;
		uint64_t index, off;
		ing_path_index(item, sizeof item, path, i);
		if (!json_is_array(f) || json_array_size(f) < 2)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s: expected [imageIndex, offset]",
					item);
		if ((why = ing_uint_value(json_array_get(f, 0), ING_JSON_INT_MAX,
					  &index)))
			return ing_fail(c, ERR_BAD_FIELD, "%s[0]: %s", item,
					why);
		if ((why = ing_uint_value(json_array_get(f, 1), ING_JSON_INT_MAX,
					  &off)))
			return ing_fail(c, ERR_BAD_FIELD, "%s[1]: %s", item,
					why);
		ing_image *img = stackshot_image(c, si, index, item, r);
		if (!img)
			return -1;
		if (off >= UINT64_MAX - img->load_address)
			return ing_fail(c, ERR_BAD_FIELD,
					"%s[1]: base + offset overflows", item);
		t->stack.frames[i].address = img->load_address + off;
		if (off + 1 > img->size)
			img->size = off + 1;
	}
	return 0;
}

/* The process the body names under PROCS (at PW): its pid, else procName,
 * else APP_NAME; its path into PRW. */
static const json_t *named_process(ing_ctx *c, const json_t *b, const json_t *procs, const char *pw,
				   const char *app_name, char prw[ING_PATH_MAX])
{
	const json_t *proc = NULL, *pid = ing_get(b, "pid"), *p;
	char pidkey[24];
	const char *key = NULL, *k;
	if (json_is_integer(pid) && json_integer_value(pid) >= 0) {
		snprintf(pidkey, sizeof pidkey, "%lld",
			 (long long)json_integer_value(pid));
		if ((proc = json_object_get(procs, pidkey)))
			key = pidkey;
	}
	/* Apple writes pid -1 at times: then the name tells. */
	const char *want = json_string_value(ing_get(b, "procName"));
	if (!want)
		want = app_name;
	if (!proc && want)
		json_object_foreach((json_t *)procs, k, p) {
			const char *n = json_string_value(json_object_get(p, "procname"));
			if (n && !strcmp(n, want)) {
				proc = p;
				key = k;
				break;
			}
		}
	if (!proc) {
		ing_fail(c, ERR_BAD_FIELD, "%s: no process with the body's pid or procName", pw);
		return NULL;
	}
	ing_path_key(prw, ING_PATH_MAX, pw, key);
	if (!json_is_object(proc)) {
		ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", prw);
		return NULL;
	}
	return proc;
}

/* The stackshot's binaryImages (at SW; its path into IW) into SI, with room
 * for the report's images. */
static int stackshot_image_list(ing_ctx *c, const json_t *ss, const char *sw, char iw[ING_PATH_MAX],
				stackshot_images *si, ing_report *r)
{
	si->list = ing_get(ss, "binaryImages");
	si->path = ing_path_key(iw, ING_PATH_MAX, sw, "binaryImages");
	if (!si->list)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", iw);
	if (!json_is_array(si->list))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an array", iw);
	size_t nlist = json_array_size(si->list);
	size_t cap = nlist < c->limits->max_images ? nlist
						   : c->limits->max_images;
	if ((nlist && !(si->slot = ing_arena_calloc(c->arena, nlist, sizeof *si->slot))) ||
	    (cap && !(r->images = ing_arena_calloc(c->arena, cap, sizeof *r->images))))
		return ing_nomem(c);
	return 0;
}

/* The process's threadById (at PRW): every thread, the first on the main
 * queue main. */
static int stackshot_threads(ing_ctx *c, const json_t *proc, const char *prw, stackshot_images *si,
			     ing_report *r)
{
	char tw[ING_PATH_MAX], item[ING_PATH_MAX];
	const json_t *threads = ing_get(proc, "threadById"), *p;
	const char *k;
	ing_path_key(tw, sizeof tw, prw, "threadById");
	if (!threads)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", tw);
	if (!json_is_object(threads))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", tw);
	if (ing_threads_alloc(c, json_object_size(threads), tw, r) < 0)
		return -1;
	bool have_main = false;
	json_object_foreach((json_t *)threads, k, p) {
		ing_thread *t = &r->threads[r->nthreads++];
		if (parse_stackshot_thread(c, p, ing_path_key(item, sizeof item, tw, k), si, r, t) <
		    0)
			return -1;
		/* Only the first main-queue thread is the main one. */
		t->main = t->main && !have_main;
		have_main = have_main || t->main;
	}
	return 0;
}

/*
 * A watchdog's stackshot (bug_type 409): the process the body names (pid,
 * else procName, else the header's app_name) under stackshot.processByPid
 * (or processByPid at the top), images from binaryImages beside it.
 */
static int parse_stackshot(ing_ctx *c, const json_t *b, const char *app_name, ing_report *r)
{
	char sw[ING_PATH_MAX], pw[ING_PATH_MAX], prw[ING_PATH_MAX];
	char iw[ING_PATH_MAX];
	const json_t *ss = ing_get(b, "stackshot");
	snprintf(sw, sizeof sw, "%s", ss ? "body.stackshot" : "body");
	if (!ss)
		ss = b;
	if (!json_is_object(ss))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", sw);
	const json_t *procs = ing_get(ss, "processByPid");
	ing_path_key(pw, sizeof pw, sw, "processByPid");
	if (!procs)
		return ing_fail(c, ERR_BAD_FIELD,
				"body.usedImages: missing (and no stackshot "
				"processByPid)");
	if (!json_is_object(procs))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", pw);
	const json_t *proc = named_process(c, b, procs, pw, app_name, prw);
	if (!proc)
		return -1;
	stackshot_images si = {0};
	if (stackshot_image_list(c, ss, sw, iw, &si, r) < 0)
		return -1;
	return stackshot_threads(c, proc, prw, &si, r);
}

static int parse_header(ing_ctx *c, const json_t *h, ing_report *r)
{
	char bug[16];
	const char *osv;
	if (!json_is_object(h))
		return ing_fail(c, ERR_BAD_FIELD,
				"header: expected a JSON object on the first "
				"line");
	const json_t *bt = ing_get(h, "bug_type");
	if (!bt)
		return ing_fail(c, ERR_BAD_FIELD, "header.bug_type: missing");
	if (!bug_type_text(bt, bug))
		return ing_fail(c, ERR_BAD_FIELD,
				"header.bug_type: expected a string");
	if (ing_string_field(c, h, "header", "incident_id", false,
			     &r->report_id) < 0)
		return -1;
	if (!kind_of(bug, &r->kind)) {
		/* The rejection names the report when its id is usable. */
		if (r->report_id &&
		    ing_check_report_id(c, r->report_id, "header.incident_id") < 0) {
			r->report_id = NULL;
			return -1;
		}
		const char *why = refusal_of(bug);
		if (why)
			return ing_fail(c, ERR_UNSUPPORTED_REPORT,
					"header.bug_type: %s is %s", bug, why);
		return ing_fail(c, ERR_UNSUPPORTED_REPORT,
				"header.bug_type: unsupported .ips type \"%s\" "
				"(309 crash, 409 watchdog kill)",
				bug);
	}
	if (ing_dimension_field(c, h, "header", "app_version", &r->app_version) < 0 ||
	    ing_string_field(c, h, "header", "build_version", false, &r->build) < 0 ||
	    ing_dimension_field(c, h, "header", "os_version", &osv) < 0)
		return -1;
	if (ing_os_split(c, osv, &r->os, &r->os_version, &r->os_build) < 0)
		return -1;
	const json_t *ts = ing_get(h, "timestamp");
	if (json_is_string(ts) && json_string_length(ts) <= c->limits->max_string) {
		r->timestamp = ing_timestamp_normalize(c, json_string_value(ts));
		if (!r->timestamp && ing_arena_over_limit(c->arena))
			return ing_nomem(c);
	}
	return 0;
}

#define MAX_SECONDS_DIGITS 9 /* 10^9 s in ms stays far below 2^53 */

/* The watchdog's wall-clock allowance a hung app exhausted, in ms, from
 * termination.reasons[] ("… exhausted real (wall clock) time allowance of
 * 10.00 seconds"), fractions past the millisecond truncated; -1 when no
 * reason names one. The JSON .ips format has no duration field: this is
 * the one measure a hang's file carries, and a lower bound of the time the
 * main thread was blocked, as the watchdog kills when it runs out. */
static int64_t watchdog_allowance_ms(const json_t *term)
{
	static const char marker[] = "time allowance of ";
	const json_t *reasons = json_object_get(term, "reasons");
	size_t i;
	const json_t *v;
	json_array_foreach(reasons, i, v)
	{
		const char *s = json_string_value(v);
		const char *at = s ? strstr(s, marker) : NULL;
		if (!at)
			continue;
		at += sizeof marker - 1;
		int64_t ms = 0;
		int digits = 0;
		for (; isdigit((unsigned char)*at) && digits < MAX_SECONDS_DIGITS; at++, digits++)
			ms = ms * 10 + (*at - '0');
		ms *= 1000;
		if (*at == '.')
			for (int64_t scale = 100; isdigit((unsigned char)*++at); scale /= 10)
				ms += (*at - '0') * scale;
		if (digits && !strncmp(at, " second", 7))
			return ms;
	}
	return -1;
}

/* The body's incident id (when the header had none), device and bundle
 * versions (when the header had none), its kind and a hang's duration. */
static int parse_body_fields(ing_ctx *c, const json_t *b, ing_report *r)
{
	if (!r->report_id &&
	    ing_string_field(c, b, "body", "incident", false, &r->report_id) <
		    0)
		return -1;
	if (!r->report_id)
		return ing_fail(c, ERR_BAD_FIELD, "header.incident_id: missing");
	if (ing_check_report_id(c, r->report_id, "header.incident_id") < 0) {
		r->report_id = NULL; /* not usable in the rejection either */
		return -1;
	}
	if (ing_dimension_field(c, b, "body", "modelCode", &r->device) < 0)
		return -1;
	const json_t *bi = ing_get(b, "bundleInfo");
	if (json_is_object(bi)) {
		if (!r->app_version &&
		    ing_dimension_field(c, bi, "body.bundleInfo", "CFBundleShortVersionString",
					&r->app_version) < 0)
			return -1;
		if (!r->build &&
		    ing_string_field(c, bi, "body.bundleInfo", "CFBundleVersion",
				     false, &r->build) < 0)
			return -1;
	}
	const json_t *term = ing_get(b, "termination");
	if (r->kind == ING_KIND_CRASH && json_is_object(term) &&
	    json_integer_value(json_object_get(term, "code")) == WATCHDOG_CODE)
		r->kind = ING_KIND_HANG; /* killed by the watchdog */
	if (r->kind == ING_KIND_HANG && json_is_object(term))
		r->duration_ms = watchdog_allowance_ms(term);
	return 0;
}

static int parse_used_images(ing_ctx *c, const json_t *imgs, ing_report *r)
{
	char item[ING_PATH_MAX];
	if (!imgs)
		return ing_fail(c, ERR_BAD_FIELD, "body.usedImages: missing");
	if (!json_is_array(imgs))
		return ing_fail(c, ERR_BAD_FIELD,
				"body.usedImages: expected an array");
	r->nimages = json_array_size(imgs);
	if (r->nimages > c->limits->max_images)
		return ing_fail(c, ERR_TOO_MANY,
				"body.usedImages: %zu images, more than the "
				"limit of %zu",
				r->nimages, c->limits->max_images);
	if (!(r->images = ing_arena_calloc(c->arena, r->nimages,
					   sizeof *r->images)))
		return ing_nomem(c);
	for (size_t i = 0; i < r->nimages; i++)
		if (parse_image(c, json_array_get(imgs, i),
				ing_path_index(item, sizeof item,
					       "body.usedImages", i),
				&r->images[i]) < 0)
			return -1;
	return 0;
}

/* body.threads: every thread, the first on the main queue main (else the
 * one that triggered the report). */
static int parse_threads(ing_ctx *c, const json_t *threads, ing_report *r)
{
	char item[ING_PATH_MAX];
	if (!threads)
		return ing_fail(c, ERR_BAD_FIELD, "body.threads: missing");
	if (!json_is_array(threads))
		return ing_fail(c, ERR_BAD_FIELD,
				"body.threads: expected an array");
	size_t n = json_array_size(threads);
	if (ing_threads_alloc(c, n, "body.threads", r) < 0)
		return -1;
	r->nthreads = n;
	size_t by_queue = SIZE_MAX, by_trigger = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		bool triggered, main_queue;
		if (parse_thread(c, json_array_get(threads, i),
				 ing_path_index(item, sizeof item,
						"body.threads", i),
				 r, &r->threads[i], &triggered,
				 &main_queue) < 0)
			return -1;
		if (main_queue && by_queue == SIZE_MAX)
			by_queue = i;
		if (triggered && by_trigger == SIZE_MAX)
			by_trigger = i;
	}
	if (by_queue != SIZE_MAX)
		r->threads[by_queue].main = true;
	else if (by_trigger != SIZE_MAX)
		r->threads[by_trigger].main = true;
	return 0;
}

/* APP_NAME: the header's, for a stackshot whose pid names no process. */
static int parse_body(ing_ctx *c, const json_t *b, const char *app_name, ing_report *r)
{
	if (!json_is_object(b))
		return ing_fail(c, ERR_BAD_FIELD, "body: expected an object");
	if (parse_body_fields(c, b, r) < 0)
		return -1;
	const json_t *imgs = ing_get(b, "usedImages");
	if (!imgs && (ing_get(b, "stackshot") || ing_get(b, "processByPid")))
		return parse_stackshot(c, b, app_name, r);
	if (parse_used_images(c, imgs, r) < 0)
		return -1;
	return parse_threads(c, ing_get(b, "threads"), r);
}

int ing_parse_ips(const char *body, size_t len, const ing_limits *limits,
		  const char *user_id, ing_batch **out_batch, ing_error *err)
{
	ing_limits defaults = ing_limits_default();
	ing_ctx c;
	ing_batch *b;
	json_t *header = NULL, *doc = NULL;
	if (!limits)
		limits = &defaults;
	*out_batch = NULL;
	if (!body || len == 0)
		return ing_error_set(err, ERR_EMPTY_BODY, "body: empty");
	const char *nl = memchr(body, '\n', len);
	if (!nl)
		return ing_error_set(err, ERR_BAD_FIELD,
				     "header: no newline after the one-line "
				     "JSON header");
	size_t hlen = (size_t)(nl - body);
	if (hlen && body[hlen - 1] == '\r')
		hlen--;
	char why[200];
	if (!(header = cm_json_parse(body, hlen, limits->max_depth, why,
				     sizeof why)))
		return ing_error_set(err, ERR_BAD_JSON, "header: %s", why);
	if (ing_batch_begin(limits, user_id, err, &c, &b) < 0) {
		json_decref(header);
		return -1;
	}
	if (ing_batch_reserve(&c, b, 1) < 0)
		goto fatal;
	ing_entry *e = &b->entries[b->nentries++];
	ing_report *r = ing_arena_alloc(c.arena, sizeof *r);
	if (!r) {
		ing_nomem(&c);
		goto fatal;
	}
	r->source = "ips";
	r->duration_ms = -1;
	r->user_id = c.user_id;
	c.err = &e->error;
	/* The header decides first: a refused type's body (text, for some)
	 * is never parsed. */
	int rc = parse_header(&c, header, r);
	if (rc == 0) {
		size_t off = (size_t)(nl - body) + 1;
		if (!(doc = cm_json_parse(body + off, len - off,
					  limits->max_depth, why, sizeof why))) {
			ing_error_set(err, ERR_BAD_JSON, "body: %s", why);
			goto fatal;
		}
		const char *app = json_string_value(json_object_get(header, "app_name"));
		if (!app)
			app = json_string_value(json_object_get(header, "name"));
		rc = parse_body(&c, doc, app, r);
	}
	if (rc < 0) {
		if (c.fatal) {
			*err = e->error;
			goto fatal;
		}
		e->report_id = r->report_id;
	} else {
		e->report = r;
		e->report_id = r->report_id;
		e->error.code = ERR_NONE;
	}
	json_decref(header);
	json_decref(doc);
	*out_batch = b;
	return 0;
fatal:
	json_decref(header);
	json_decref(doc);
	return ing_batch_abort(&c, b);
}
