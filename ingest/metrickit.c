/*
 * metrickit.c — Apple MetricKit MXDiagnosticPayload JSON (SPEC §4.2).
 *
 * Each hangDiagnostics[] entry becomes a stall report, each
 * cpuExceptionDiagnostics[] entry a cpu report and each crashDiagnostics[]
 * entry a crash report. Every callStacks[] element of the entry's
 * callStackTree becomes a thread whose frames are the heaviest path of its
 * tree (by sampleCount, first on ties); the threadAttributed one (else the
 * first) is the main thread. The tree's nesting direction is detected from
 * its ends (docs/INGEST.md), and frames come out innermost first.
 *
 * MetricKit gives image-relative offsets; an image's load address is
 * address - offsetIntoBinaryTextSegment from any frame that has an address,
 * else a synthetic one is assigned (see assign_loads) so that
 * address - load_address is always the offset the device reported.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "ingest/field.h"

/* Where synthetic load addresses start at the lowest, and their alignment. */
#define SYNTH_BASE ((uint64_t)1 << 32)
#define SYNTH_REGION_ALIGN ((uint64_t)1 << 28)
#define SYNTH_IMAGE_ALIGN ((uint64_t)1 << 14)

typedef struct mk_image {
	uint8_t uuid[16];
	const char *name;
	bool has_load;
	uint64_t load;
	uint64_t max_off;
} mk_image;

/* Per-batch scratch, sized by the limits once. */
typedef struct mk_scratch {
	const json_t **path; /* heaviest path, max_frames */
	mk_image *img;       /* max_images */
	size_t nimg;
	int32_t *slots;      /* open addressing over img, nslots (pow2) */
	size_t nslots;
} mk_scratch;

static const struct {
	const char *key;
	ing_kind kind;
} diag_kinds[] = {
	{"hangDiagnostics", ING_KIND_STALL},
	{"cpuExceptionDiagnostics", ING_KIND_CPU},
	{"crashDiagnostics", ING_KIND_CRASH},
};

/* Keys that make an object an MXDiagnosticPayload even with no entry. */
static const char *const payload_keys[] = {
	"hangDiagnostics", "cpuExceptionDiagnostics", "crashDiagnostics",
	"diskWriteExceptionDiagnostics", "appLaunchDiagnostics",
	"timeStampBegin", "timeStampEnd",
};

size_t ing_metrickit_max_depth(const ing_limits *limits)
{
	size_t d = limits->max_depth;
	if (limits->max_frames < (JSON_PARSER_MAX_DEPTH - d) / 2)
		d += 2 * limits->max_frames;
	else
		d = JSON_PARSER_MAX_DEPTH;
	return d > JSON_PARSER_MAX_DEPTH ? JSON_PARSER_MAX_DEPTH : d;
}

static int dump_cb(const char *buf, size_t size, void *data)
{
	return XXH3_128bits_update(data, buf, size) == XXH_OK ? 0 : -1;
}

int ing_metrickit_entry_key(const json_t *entry, const char *user_id,
			    char out[33])
{
	XXH3_state_t st;
	out[0] = '\0';
	if (!entry || XXH3_128bits_reset(&st) != XXH_OK)
		return -1;
	if (json_dump_callback(entry, dump_cb, &st,
			       JSON_SORT_KEYS | JSON_COMPACT |
				       JSON_ENCODE_ANY) != 0)
		return -1;
	static const char nul = '\0';
	XXH3_128bits_update(&st, &nul, 1);
	if (user_id)
		XXH3_128bits_update(&st, user_id, strlen(user_id));
	XXH128_hash_t h = XXH3_128bits_digest(&st);
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64,
		 (unsigned long long)h.low64);
	return 0;
}

/*
 * hangDuration and friends: a JSON number or a numeric string, optionally
 * with a unit ("9 sec", "20 secs." as iOS 14 writes it, "1.5 s", "850 ms",
 * "2 min"); no unit = seconds. NULL on success with *out_ms rounded to the
 * millisecond; else the reason the caller notes as an unknown duration.
 */
static const char *parse_duration(const json_t *v, int64_t *out_ms)
{
	static const struct {
		const char *name;
		double ms;
	} units[] = {
		{"ms", 1},          {"msec", 1},          {"msecs", 1},
		{"millisecond", 1}, {"milliseconds", 1},  {"s", 1000},
		{"sec", 1000},      {"secs", 1000},       {"second", 1000},
		{"seconds", 1000},  {"min", 60000},       {"mins", 60000},
		{"minute", 60000},  {"minutes", 60000},   {"h", 3600000},
		{"hr", 3600000},    {"hrs", 3600000},     {"hour", 3600000},
		{"hours", 3600000},
	};
	double value, factor = 1000;
	if (json_is_number(v)) {
		value = json_number_value(v);
	} else if (json_is_string(v)) {
		const char *p = json_string_value(v);
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			return "expected a duration like \"9 sec\"";
		value = 0;
		size_t ndig = 0;
		for (; *p >= '0' && *p <= '9'; p++, ndig++)
			value = value * 10 + (*p - '0');
		if (*p == '.') {
			double scale = 0.1;
			for (p++; *p >= '0' && *p <= '9'; p++, ndig++) {
				value += (*p - '0') * scale;
				scale /= 10;
			}
		}
		if (ndig > 18)
			return "duration has too many digits";
		while (*p == ' ')
			p++;
		size_t ulen = strcspn(p, " .");
		if (ulen) {
			size_t i, n = sizeof units / sizeof units[0];
			for (i = 0; i < n; i++)
				if (strlen(units[i].name) == ulen &&
				    !strncasecmp(units[i].name, p, ulen))
					break;
			if (i == n)
				return "unknown duration unit";
			factor = units[i].ms;
			p += ulen;
			if (*p == '.') /* an abbreviation's full stop */
				p++;
			while (*p == ' ')
				p++;
		}
		if (*p)
			return "expected a duration like \"9 sec\"";
	} else {
		return "expected a duration like \"9 sec\"";
	}
	double ms = value * factor;
	/* A year in ms is ~3.2e10: anything near 2^53 is a lie. */
	if (!(ms >= 0 && ms < 1e15))
		return "duration out of range";
	*out_ms = (int64_t)llround(ms);
	return NULL;
}

/* The root end of a stack: dyld's start (by image, or by a symbol field
 * when a tool added one). */
static bool is_root_marker(const json_t *frame)
{
	const json_t *n = json_object_get(frame, "binaryName");
	if (json_is_string(n)) {
		const char *s = json_string_value(n);
		if (!strcmp(s, "dyld") || !strcmp(s, "libdyld.dylib"))
			return true;
	}
	static const char *const sym_keys[] = {"symbol", "symbolName",
					       "function"};
	for (size_t i = 0; i < sizeof sym_keys / sizeof sym_keys[0]; i++) {
		const json_t *s = json_object_get(frame, sym_keys[i]);
		if (json_is_string(s) && !strcmp(json_string_value(s), "start"))
			return true;
	}
	return false;
}

static size_t uuid_hash(const uint8_t uuid[16], size_t nslots)
{
	return (size_t)XXH3_64bits(uuid, 16) & (nslots - 1);
}

/* The image of UUID, added when new. -1 (ctx failed) over max_images. */
static int32_t image_index(ing_ctx *c, mk_scratch *s, const uint8_t uuid[16],
			   const char *name, const char *where)
{
	size_t i = uuid_hash(uuid, s->nslots);
	while (s->slots[i] >= 0) {
		mk_image *im = &s->img[s->slots[i]];
		if (!memcmp(im->uuid, uuid, 16)) {
			if (!im->name)
				im->name = name;
			return s->slots[i];
		}
		i = (i + 1) & (s->nslots - 1);
	}
	if (s->nimg == c->limits->max_images) {
		ing_fail(c, ERR_TOO_MANY,
			 "%s: more than %zu distinct binaryUUIDs", where,
			 c->limits->max_images);
		return -1;
	}
	mk_image *im = &s->img[s->nimg];
	memset(im, 0, sizeof *im);
	memcpy(im->uuid, uuid, 16);
	im->name = name;
	s->slots[i] = (int32_t)s->nimg;
	return (int32_t)s->nimg++;
}

/* The child of LEVEL (depth N) with the most samples, into *BEST. */
static int heaviest_child(ing_ctx *c, const json_t *level, const char *where, size_t n,
			  const json_t **best)
{
	uint64_t best_count = 0;
	*best = NULL;
	for (size_t i = 0; i < json_array_size(level); i++) {
		const json_t *f = json_array_get(level, i);
		if (!json_is_object(f))
			return ing_fail(c, ERR_BAD_FIELD, "%s depth %zu [%zu]: expected an object",
					where, n, i);
		uint64_t count = 0;
		const json_t *sc = ing_get(f, "sampleCount");
		const char *why;
		if (sc && (why = ing_uint_value(sc, ING_JSON_INT_MAX, &count)))
			return ing_fail(c, ERR_BAD_FIELD, "%s depth %zu [%zu].sampleCount: %s",
					where, n, i, why);
		if (!*best || count > best_count) {
			*best = f;
			best_count = count;
		}
	}
	return 0;
}

/* The heaviest path of CS from its root frames down, into s->path;
 * returns its length or -1. */
static ptrdiff_t heaviest_path(ing_ctx *c, mk_scratch *s, const json_t *cs, const char *where)
{
	char path[ING_PATH_MAX];
	const json_t *level = ing_get(cs, "callStackRootFrames");
	if (!level)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing",
				ing_path_key(path, sizeof path, where,
					     "callStackRootFrames"));
	size_t n = 0;
	while (level) {
		if (!json_is_array(level))
			return ing_fail(c, ERR_BAD_FIELD, "%s depth %zu: %s is not an array", where,
					n, n ? "subFrames" : "callStackRootFrames");
		if (json_array_size(level) == 0)
			break;
		const json_t *best;
		if (heaviest_child(c, level, where, n, &best) < 0)
			return -1;
		if (n == c->limits->max_frames)
			return ing_fail(c, ERR_TOO_MANY, "%s: call stack deeper than %zu frames",
					where, c->limits->max_frames);
		s->path[n++] = best;
		level = ing_get(best, "subFrames");
	}
	return (ptrdiff_t)n;
}

/* Which end of a path of N frames is the root: dyld's start says so; else
 * the tree kind. */
static bool root_first(const mk_scratch *s, size_t n, bool per_thread)
{
	if (n > 1) {
		bool top = is_root_marker(s->path[0]);
		bool deep = is_root_marker(s->path[n - 1]);
		if (top != deep)
			return top;
	}
	return !per_thread;
}

/* Frame F at FW into FR: its offset and image index into *FIMG when it is
 * in an image (-1 and its address when not). */
static int parse_frame(ing_ctx *c, mk_scratch *s, const json_t *f, const char *fw, ing_frame *fr,
		       int32_t *fimg)
{
	bool has_uuid;
	uint8_t uuid[16];
	const char *name, *why;
	if (ing_uuid_field(c, f, fw, "binaryUUID", &has_uuid, uuid) < 0 ||
	    ing_string_field(c, f, fw, "binaryName", false, &name) < 0)
		return -1;
	uint64_t off = 0, addr = 0;
	const json_t *jo = ing_get(f, "offsetIntoBinaryTextSegment");
	const json_t *ja = ing_get(f, "address");
	if (jo && (why = ing_uint_value(jo, ING_JSON_INT_MAX, &off)))
		return ing_fail(c, ERR_BAD_FIELD, "%s.offsetIntoBinaryTextSegment: %s", fw, why);
	if (ja && (why = ing_address_value(ja, &addr)))
		return ing_fail(c, ERR_BAD_FIELD, "%s.address: %s", fw, why);
	if (!has_uuid || !jo) {
		/* Not attributable to an image: keep the address. */
		*fimg = -1;
		fr->address = addr;
		return 0;
	}
	int32_t idx = image_index(c, s, uuid, name, fw);
	if (idx < 0)
		return -1;
	mk_image *im = &s->img[idx];
	if (ja && addr >= off && !im->has_load) {
		im->has_load = true;
		im->load = addr - off;
	}
	if (off > im->max_off)
		im->max_off = off;
	*fimg = idx;
	fr->address = off;
	return 0;
}

/*
 * One callStacks[] element at WHERE: its heaviest path, innermost first,
 * into T. Frames in an image get their offset in address for now and the
 * image index in FIMG[i] (-1 for frames in no image).
 */
static int parse_call_stack(ing_ctx *c, mk_scratch *s, const json_t *cs, const char *where,
			    bool per_thread, ing_thread *t, int32_t **out_fimg)
{
	if (!json_is_object(cs))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", where);
	ptrdiff_t depth = heaviest_path(c, s, cs, where);
	if (depth < 0)
		return -1;
	size_t n = (size_t)depth;
	bool from_root = root_first(s, n, per_thread);
	t->stack.nframes = n;
	t->stack.frames = ing_arena_calloc(c->arena, n, sizeof(ing_frame));
	int32_t *fimg = ing_arena_calloc(c->arena, n, sizeof(int32_t));
	if (!t->stack.frames || !fimg)
		return ing_nomem(c);
	*out_fimg = fimg;
	for (size_t i = 0; i < n; i++) {
		/* Depth in the JSON, for messages. */
		size_t d = from_root ? n - 1 - i : i;
		char fw[ING_PATH_MAX + 32];
		snprintf(fw, sizeof fw, "%s depth %zu", where, d);
		if (parse_frame(c, s, s->path[d], fw, &t->stack.frames[i], &fimg[i]) < 0)
			return -1;
	}
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return v > UINT64_MAX - (a - 1) ? UINT64_MAX : (v + a - 1) & ~(a - 1);
}

/*
 * Images without any frame address get synthetic load addresses above
 * every real address of the report (at least 4 GiB, 256 MiB aligned), each
 * 16 KiB aligned and spanning its largest offset, so none overlaps another
 * image or a frame outside images.
 */
static void assign_loads(mk_scratch *s, ing_thread *threads, size_t nthreads,
			 int32_t **fimg)
{
	uint64_t top = 0;
	for (size_t i = 0; i < s->nimg; i++)
		if (s->img[i].has_load && s->img[i].load + s->img[i].max_off >= top)
			top = s->img[i].load + s->img[i].max_off + 1;
	for (size_t t = 0; t < nthreads; t++)
		for (size_t j = 0; j < threads[t].stack.nframes; j++)
			if (fimg[t][j] < 0 &&
			    threads[t].stack.frames[j].address >= top)
				top = threads[t].stack.frames[j].address + 1;
	uint64_t cursor = align_up(top > SYNTH_BASE ? top : SYNTH_BASE,
				   SYNTH_REGION_ALIGN);
	for (size_t i = 0; i < s->nimg; i++) {
		mk_image *im = &s->img[i];
		if (im->has_load)
			continue;
		im->has_load = true;
		im->load = cursor;
		cursor = align_up(cursor + im->max_off + 1, SYNTH_IMAGE_ALIGN);
	}
}

static int parse_metadata(ing_ctx *c, const json_t *diag, const char *where,
			  ing_kind kind, ing_report *r, sym_arch *arch)
{
	char mw[ING_PATH_MAX];
	const json_t *md = ing_get(diag, "diagnosticMetaData");
	*arch = SYM_ARCH_UNKNOWN;
	if (!md)
		return 0;
	ing_path_key(mw, sizeof mw, where, "diagnosticMetaData");
	if (!json_is_object(md))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", mw);
	const char *osv, *pa;
	if (ing_dimension_field(c, md, mw, "appVersion", &r->app_version) < 0 ||
	    ing_string_field(c, md, mw, "appBuildVersion", false, &r->build) < 0 ||
	    ing_dimension_field(c, md, mw, "deviceType", &r->device) < 0 ||
	    ing_dimension_field(c, md, mw, "osVersion", &osv) < 0 ||
	    ing_string_field(c, md, mw, "platformArchitecture", false, &pa) < 0)
		return -1;
	if (ing_os_split(c, osv, &r->os, &r->os_version, &r->os_build) < 0)
		return -1;
	*arch = sym_arch_parse(pa);
	const char *dkey = kind == ING_KIND_STALL ? "hangDuration"
			   : kind == ING_KIND_CPU ? "totalSampledTime"
						  : NULL;
	/* The duration is a measurement, not what the report is about: one
	 * that cannot be read leaves it unknown (-1), the stack still counts. */
	const json_t *dv = dkey ? ing_get(md, dkey) : NULL;
	if (dv && parse_duration(dv, &r->duration_ms))
		r->duration_ms = -1;
	return 0;
}

/* The callStacks array of DIAG's callStackTree (its path into PATH) and
 * whether they are per thread. */
static int call_stacks(ing_ctx *c, const json_t *diag, const char *where, char path[ING_PATH_MAX],
		       const json_t **stacks, bool *per_thread)
{
	char tw[ING_PATH_MAX];
	const json_t *tree = ing_get(diag, "callStackTree");
	ing_path_key(tw, sizeof tw, where, "callStackTree");
	if (!tree)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", tw);
	if (!json_is_object(tree))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", tw);
	const json_t *pt = ing_get(tree, "callStackPerThread");
	if (pt && !json_is_boolean(pt))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected true or false",
				ing_path_key(path, ING_PATH_MAX, tw, "callStackPerThread"));
	*per_thread = json_is_true(pt);
	*stacks = ing_get(tree, "callStacks");
	ing_path_key(path, ING_PATH_MAX, tw, "callStacks");
	if (!*stacks)
		return ing_fail(c, ERR_BAD_FIELD, "%s: missing", path);
	if (!json_is_array(*stacks))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an array", path);
	size_t n = json_array_size(*stacks);
	if (n == 0)
		return ing_fail(c, ERR_BAD_FIELD, "%s: must not be empty", path);
	if (n > c->limits->max_threads)
		return ing_fail(c, ERR_TOO_MANY, "%s: %zu call stacks, more than the limit of %zu",
				path, n, c->limits->max_threads);
	return 0;
}

/* Every call stack of STACKS (at PATH) into r->threads, the first one
 * attributed to the thread as main (else the first). */
static int parse_threads(ing_ctx *c, mk_scratch *s, const json_t *stacks, const char *path,
			 bool per_thread, ing_report *r, int32_t **fimg)
{
	size_t main_idx = 0;
	bool found_main = false;
	for (size_t i = 0; i < r->nthreads; i++) {
		char sw[ING_PATH_MAX];
		const json_t *cs = json_array_get(stacks, i);
		ing_path_index(sw, sizeof sw, path, i);
		if (parse_call_stack(c, s, cs, sw, per_thread, &r->threads[i],
				     &fimg[i]) < 0)
			return -1;
		const json_t *ta = ing_get(cs, "threadAttributed");
		if (ta && !json_is_boolean(ta))
			return ing_fail(c, ERR_BAD_FIELD,
					"%s.threadAttributed: expected true or false", sw);
		if (!found_main && json_is_true(ta)) {
			found_main = true;
			main_idx = i;
		}
	}
	r->threads[main_idx].main = true;
	return 0;
}

/* The images the frames named into r->images, with their load addresses;
 * then every frame's offset becomes an address. */
static int place_images(ing_ctx *c, mk_scratch *s, sym_arch arch, ing_report *r, int32_t **fimg)
{
	assign_loads(s, r->threads, r->nthreads, fimg);
	r->nimages = s->nimg;
	r->images = ing_arena_calloc(c->arena, s->nimg, sizeof *r->images);
	if (!r->images)
		return ing_nomem(c);
	for (size_t i = 0; i < s->nimg; i++) {
		mk_image *im = &s->img[i];
		ing_image *img = &r->images[i];
		img->has_uuid = true;
		memcpy(img->uuid, im->uuid, 16);
		img->arch = arch;
		img->load_address = im->load;
		img->size = im->max_off + 1;
		if (im->name) {
			img->name = im->name;
		} else {
			/* No binaryName anywhere: the UUID names the image
			 * so grouping identities stay stable. */
			char u[37];
			sym_uuid_format(im->uuid, u);
			if (!(img->name = ing_arena_strdup(c->arena, u)))
				return ing_nomem(c);
		}
	}
	for (size_t t = 0; t < r->nthreads; t++)
		for (size_t j = 0; j < r->threads[t].stack.nframes; j++)
			if (fimg[t][j] >= 0)
				r->threads[t].stack.frames[j].address +=
					s->img[fimg[t][j]].load;
	return 0;
}

static int parse_diag(ing_ctx *c, mk_scratch *s, const json_t *diag, const char *where,
		      ing_kind kind, const char *timestamp, ing_report *r)
{
	char path[ING_PATH_MAX];
	if (!json_is_object(diag))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", where);
	r->source = "metrickit";
	r->kind = kind;
	r->duration_ms = -1;
	r->timestamp = timestamp;
	r->user_id = c->user_id;
	sym_arch arch;
	if (parse_metadata(c, diag, where, kind, r, &arch) < 0)
		return -1;
	const json_t *stacks = NULL;
	bool per_thread = false;
	if (call_stacks(c, diag, where, path, &stacks, &per_thread) < 0)
		return -1;
	size_t n = json_array_size(stacks);
	r->nthreads = n;
	r->threads = ing_arena_calloc(c->arena, n, sizeof *r->threads);
	int32_t **fimg = ing_arena_calloc(c->arena, n, sizeof *fimg);
	if (!r->threads || !fimg)
		return ing_nomem(c);
	s->nimg = 0;
	for (size_t i = 0; i < s->nslots; i++)
		s->slots[i] = -1;
	if (parse_threads(c, s, stacks, path, per_thread, r, fimg) < 0)
		return -1;
	return place_images(c, s, arch, r, fimg);
}

/* The payload objects of ROOT: a payload, [payload…] or {"payloads":[…]}.
 * Sets *list (array or NULL for a single payload). */
static int payload_list(ing_ctx *c, const json_t *root, const json_t **list,
			const char **prefix)
{
	*list = NULL;
	*prefix = "";
	if (json_is_array(root)) {
		*list = root;
		return 0;
	}
	if (!json_is_object(root))
		return ing_fail(c, ERR_BAD_FIELD,
				"body: expected an MXDiagnosticPayload object, "
				"an array of them or {\"payloads\":[…]}");
	const json_t *p = json_object_get(root, "payloads");
	if (p) {
		if (!json_is_array(p))
			return ing_fail(c, ERR_BAD_FIELD,
					"payloads: expected an array");
		*list = p;
		*prefix = "payloads";
	}
	return 0;
}

/* Payload P of LIST (ROOT itself when LIST is NULL) and its path into PW. */
static const json_t *payload_at(const json_t *root, const json_t *list, const char *prefix,
				size_t p, char pw[ING_PATH_MAX])
{
	pw[0] = '\0';
	if (!list)
		return root;
	ing_path_index(pw, ING_PATH_MAX, *prefix ? prefix : "body", p);
	return json_array_get(list, p);
}

/* Checks payload PL's shape and adds its diagnostics to *TOTAL. */
static int count_payload(ing_ctx *c, const json_t *pl, const char *pw, size_t *total)
{
	if (!json_is_object(pl))
		return ing_fail(c, ERR_BAD_FIELD, "%s: expected an object", pw);
	bool known = false;
	for (size_t k = 0; k < sizeof payload_keys / sizeof *payload_keys; k++)
		known |= json_object_get(pl, payload_keys[k]) != NULL;
	if (!known)
		return ing_fail(c, ERR_BAD_FIELD,
				"%s: not an MXDiagnosticPayload (no "
				"hangDiagnostics, cpuExceptionDiagnostics, …)",
				*pw ? pw : "body");
	for (size_t k = 0; k < sizeof diag_kinds / sizeof *diag_kinds; k++) {
		const json_t *a = ing_get(pl, diag_kinds[k].key);
		char path[ING_PATH_MAX];
		if (!a)
			continue;
		if (!json_is_array(a))
			return ing_fail(c, ERR_BAD_FIELD, "%s: expected an array",
					ing_path_key(path, sizeof path, pw, diag_kinds[k].key));
		*total += json_array_size(a);
	}
	return 0;
}

static int scratch_alloc(mk_scratch *s, const ing_limits *limits)
{
	s->nslots = 16;
	while (s->nslots < 2 * limits->max_images)
		s->nslots *= 2;
	s->path = calloc(limits->max_frames ? limits->max_frames : 1, sizeof *s->path);
	s->img = calloc(limits->max_images ? limits->max_images : 1, sizeof *s->img);
	s->slots = calloc(s->nslots, sizeof *s->slots);
	return s->path && s->img && s->slots ? 0 : -1;
}

static void scratch_free(mk_scratch *s)
{
	free(s->path);
	free(s->img);
	free(s->slots);
}

/* The payload's time, as metadata: an odd form is dropped (*TS NULL). */
static int payload_time(ing_ctx *c, const json_t *pl, const char **ts)
{
	*ts = NULL;
	const json_t *jts = ing_get(pl, "timeStampEnd");
	if (!jts)
		jts = ing_get(pl, "timeStampBegin");
	if (json_is_string(jts) && json_string_length(jts) <= c->limits->max_string &&
	    !(*ts = ing_timestamp_normalize(c, json_string_value(jts))) &&
	    ing_arena_over_limit(c->arena))
		return ing_nomem(c);
	return 0;
}

/* Diagnostic D at WHERE into the batch's next entry; a refusal of the
 * entry stays in it, -1 only for what fails the whole body. */
static int parse_entry(ing_ctx *c, mk_scratch *s, ing_batch *b, ing_error *err, const json_t *d,
		       const char *where, ing_kind kind, const char *ts)
{
	char key[33];
	ing_entry *e = &b->entries[b->nentries++];
	/* Failures outside the entry's own parse are the body's. */
	c->err = err;
	ing_report *r = ing_arena_alloc(c->arena, sizeof *r);
	if (!r || ing_metrickit_entry_key(d, c->user_id, key) < 0 ||
	    !(e->report_id = ing_arena_strdup(c->arena, key)))
		return ing_nomem(c);
	c->err = &e->error;
	if (parse_diag(c, s, d, where, kind, ts, r) < 0) {
		if (c->fatal) {
			*err = e->error;
			return -1;
		}
		return 0;
	}
	r->report_id = e->report_id;
	e->report = r;
	e->error.code = ERR_NONE;
	return 0;
}

/* Every diagnostic of payload PL (at PW) into the batch. */
static int parse_payload(ing_ctx *c, mk_scratch *s, ing_batch *b, ing_error *err, const json_t *pl,
			 const char *pw)
{
	c->err = err;
	const char *ts;
	if (payload_time(c, pl, &ts) < 0)
		return -1;
	for (size_t k = 0; k < sizeof diag_kinds / sizeof *diag_kinds; k++) {
		const json_t *a = ing_get(pl, diag_kinds[k].key);
		char aw[ING_PATH_MAX];
		ing_path_key(aw, sizeof aw, pw, diag_kinds[k].key);
		for (size_t i = 0; i < json_array_size(a); i++) {
			char where[ING_PATH_MAX];
			ing_path_index(where, sizeof where, aw, i);
			if (parse_entry(c, s, b, err, json_array_get(a, i), where,
					diag_kinds[k].kind, ts) < 0)
				return -1;
		}
	}
	return 0;
}

int ing_parse_metrickit_json(const json_t *root, const ing_limits *limits,
			     const char *user_id, ing_batch **out_batch,
			     ing_error *err)
{
	ing_limits defaults = ing_limits_default();
	ing_ctx c;
	ing_batch *b;
	mk_scratch s = {0};
	if (!limits)
		limits = &defaults;
	*out_batch = NULL;
	if (ing_batch_begin(limits, user_id, err, &c, &b) < 0)
		return -1;
	b->is_batch = true;
	const json_t *list;
	const char *prefix;
	if (payload_list(&c, root, &list, &prefix) < 0)
		return ing_batch_abort(&c, b);
	size_t npayloads = list ? json_array_size(list) : 1;
	char pw[ING_PATH_MAX];

	/* Count entries (and check shapes) before parsing any. */
	size_t total = 0;
	for (size_t p = 0; p < npayloads; p++)
		if (count_payload(&c, payload_at(root, list, prefix, p, pw), pw, &total) < 0)
			return ing_batch_abort(&c, b);
	if (total > limits->max_reports) {
		ing_fail(&c, ERR_TOO_MANY,
			 "body: %zu diagnostics, more than the limit of %zu",
			 total, limits->max_reports);
		return ing_batch_abort(&c, b);
	}
	if (ing_batch_reserve(&c, b, total) < 0)
		return ing_batch_abort(&c, b);
	if (total == 0) {
		*out_batch = b;
		return 0;
	}

	int rc = scratch_alloc(&s, limits);
	if (rc < 0)
		ing_fail(&c, ERR_INTERNAL, "out of memory");
	for (size_t p = 0; rc == 0 && p < npayloads; p++)
		rc = parse_payload(&c, &s, b, err, payload_at(root, list, prefix, p, pw), pw);
	scratch_free(&s);
	if (rc < 0)
		return ing_batch_abort(&c, b);
	*out_batch = b;
	return 0;
}

int ing_parse_metrickit(const char *body, size_t len,
			const ing_limits *limits, const char *user_id,
			ing_batch **out_batch, ing_error *err)
{
	ing_limits defaults = ing_limits_default();
	return ing_parse_text(ing_parse_metrickit_json, body, len, limits,
			      ing_metrickit_max_depth(limits ? limits : &defaults),
			      user_id, out_batch, err);
}
