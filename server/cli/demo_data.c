/*
 * demo_data.c — the demo data set; see demo.h.
 *
 * Data-driven: what the demo shows is in the tables below (images,
 * versions, devices, the stacks and their outer run-loop parts). A new
 * feature that wants demo data adds rows; the generator needs a change
 * only for a new kind of field. Stacks are listed most frequent first: the
 * k-th (from 1) is drawn with weight 1/k^1.1 (Zipf-like), among the stacks
 * present in the report's app version.
 *
 * App frames name a function of the demo dSYM (scripts/demo/build-dsym.sh)
 * by the name the symbolizer gives it; their addresses are found by
 * scanning the dSYM's own symbolization of its __TEXT, so they always
 * symbolize to that function, with an inline chain and file:line.
 * System and vendor frames are offsets in images the server has no debug
 * file for (system images carry the on-device symbol hint Matrix sends).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/sampling.h"
#include "server/cli/demo.h"
#include "symbolizer/symbolizer.h"

#define DAY_SECONDS 86400
#define MAX_FRAMES 24
#define USERS	    800
#define APP_IMAGE "StallDemo"
#define APP_DIR "/private/var/containers/Bundle/Application/5F1C2D3A-8B4E-4C7F-9A61-2E0D7B3C4A15/StallDemo.app"

/* ---- tables ----------------------------------------------------------------- */

/* Images other than the app's: the OS's (no debug file: the server has
 * none) and vendor frameworks shipped without a dSYM. */
typedef struct image_row {
	const char *key;  /* what frames name */
	const char *path; /* the image's name in reports */
	uint64_t base;    /* system: offset in the shared cache; vendor: after the app */
	uint64_t size;
	bool system;      /* a new UUID per OS version */
} image_row;

static const image_row images[] = {
	{"dyld", "/usr/lib/dyld", 0x0, 0x64000, true},
	{"libsystem_kernel", "/usr/lib/system/libsystem_kernel.dylib", 0x1000000, 0x3c000, true},
	{"libsystem_pthread", "/usr/lib/system/libsystem_pthread.dylib", 0x1040000, 0x10000, true},
	{"libsystem_platform", "/usr/lib/system/libsystem_platform.dylib", 0x1050000, 0x8000, true},
	{"libdispatch", "/usr/lib/system/libdispatch.dylib", 0x1060000, 0x48000, true},
	{"CoreFoundation",
	 "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation", 0x2000000,
	 0x3f0000, true},
	{"GraphicsServices",
	 "/System/Library/PrivateFrameworks/GraphicsServices.framework/GraphicsServices",
	 0x2400000, 0xc000, true},
	{"QuartzCore", "/System/Library/Frameworks/QuartzCore.framework/QuartzCore", 0x2500000,
	 0x390000, true},
	{"UIKitCore", "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore",
	 0x3000000, 0x1a00000, true},
	{"AdsKit", APP_DIR "/Frameworks/AdsKit.framework/AdsKit", 0x1000000, 0x90000, false},
	{"AnalyticsSDK", APP_DIR "/Frameworks/AnalyticsSDK.framework/AnalyticsSDK", 0x1100000,
	 0x40000, false},
};
#define NIMAGES (sizeof images / sizeof images[0])

/* A frame: a function of the app (optionally the address where INLINED
 * is inlined into it), or an offset in another image with an optional
 * on-device symbol hint. */
typedef struct frame_row {
	const char *image; /* NULL: the app */
	const char *function, *inlined;
	uint64_t offset;
	const char *hint;
} frame_row;

#define APP(fn) {NULL, fn, NULL, 0, NULL}
#define APP_IN(fn, in) {NULL, fn, in, 0, NULL}
#define SYS(img, off, hint) {img, NULL, NULL, off, hint}
#define VENDOR(img, off) {img, NULL, NULL, off, NULL}

/* The outer part of a main-thread stack: how the run loop got there. */
typedef enum outer_kind { OUTER_EVENT, OUTER_DISPLAY, OUTER_DISPATCH, OUTER_COUNT } outer_kind;

static const frame_row outers[OUTER_COUNT][8] = {
	[OUTER_EVENT] = {SYS("UIKitCore", 0x1f4a8c, "-[UIApplication sendEvent:]"),
			 SYS("UIKitCore", 0x1f2c10, "__dispatchPreprocessedEventFromEventQueue"),
			 SYS("CoreFoundation", 0x7a1c4,
			     "__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION__"),
			 SYS("CoreFoundation", 0x7b3f0, "__CFRunLoopDoSources0")},
	[OUTER_DISPLAY] = {SYS("QuartzCore", 0x2a41c, "CA::Display::DisplayLink::dispatch_items"),
			   SYS("CoreFoundation", 0x8e0b8,
			       "__CFRUNLOOP_IS_CALLING_OUT_TO_A_TIMER_CALLBACK_FUNCTION__"),
			   SYS("CoreFoundation", 0x8d9c4, "__CFRunLoopDoTimer")},
	[OUTER_DISPATCH] = {SYS("libdispatch", 0x3e6c, "_dispatch_call_block_and_release"),
			    SYS("libdispatch", 0x5910, "_dispatch_client_callout"),
			    SYS("libdispatch", 0x14b7c, "_dispatch_main_queue_drain"),
			    SYS("CoreFoundation", 0x7d0d8,
				"__CFRUNLOOP_IS_SERVICING_THE_MAIN_DISPATCH_QUEUE__")},
};

/* Below every outer part: the run loop, UIApplicationMain, main, dyld. */
static const frame_row run_loop[] = {
	SYS("CoreFoundation", 0x7c8a4, "__CFRunLoopRun"),
	SYS("CoreFoundation", 0x81d14, "CFRunLoopRunSpecific"),
	SYS("GraphicsServices", 0x1368, "GSEventRunModal"),
	SYS("UIKitCore", 0x3a6c0c, "-[UIApplication _run]"),
	SYS("UIKitCore", 0x3a6870, "UIApplicationMain"),
	APP("main"),
	SYS("dyld", 0x5dec, "start"),
};

typedef struct stack_row {
	const char *what; /* for the reader of this table */
	int since;        /* first version (index in versions[]) it appears in */
	outer_kind outer;
	frame_row frames[8]; /* innermost first, up to the outer part */
} stack_row;

/* The regression the demo shows (docs/TRIAGE.md): a stack that became
 * FACTOR times as frequent from version FROM (index in versions[]) on. */
static const struct {
	const char *what;
	int from;
	double factor;
} regression = {"lock held by a background sync", 2, 4.0};

static const stack_row stacks[] = {
	{"hashing every cell's text on the main thread",
	 0,
	 OUTER_EVENT,
	 {APP_IN("stall_hash", "mix_lane"), APP("stall_digest_string"),
	  APP("-[SSWidget renderFrame:intoBuffer:length:]")}},
	{"synchronous XPC round trip",
	 0,
	 OUTER_DISPATCH,
	 {SYS("libsystem_kernel", 0x1a34, "mach_msg2_trap"),
	  SYS("libsystem_kernel", 0x13d4c, "mach_msg2_internal"),
	  SYS("libsystem_kernel", 0x13a60, "mach_msg_overwrite"),
	  SYS("CoreFoundation", 0x7f8a0, "__CFRunLoopServiceMachPort"),
	  APP("-[SSWidget stallForDuration:onQueue:withPriority:]")}},
	{"layout of every shape",
	 0,
	 OUTER_DISPLAY,
	 {APP_IN("geo::total_area(geo::Shape* const*, int)",
		 "geo::total_area(geo::Shape* const*, int)::$_0::operator()(geo::Shape const*) "
		 "const"),
	  APP("geo_run"), APP("run_geo")}},
	{"the new frame renderer in 2.5.0",
	 2,
	 OUTER_DISPLAY,
	 {APP_IN("-[SSWidget renderFrame:intoBuffer:length:]", "sat_add"), APP("ss_widget_demo")}},
	{"lock held by a background sync",
	 0,
	 OUTER_EVENT,
	 {SYS("libsystem_kernel", 0x3f14, "__psynch_mutexwait"),
	  SYS("libsystem_pthread", 0x2e8c, "_pthread_mutex_firstfit_lock_slow"),
	  APP("stall_busy_wait"), APP("stall_run_steps")}},
	{"ad SDK initialised on the main thread",
	 0,
	 OUTER_EVENT,
	 {VENDOR("AdsKit", 0x1a2c0), VENDOR("AdsKit", 0x19f04), APP("-[SSWidget runWithBlock:]")}},
	{"waiting on a semaphore",
	 0,
	 OUTER_DISPATCH,
	 {SYS("libsystem_kernel", 0x1b10, "semaphore_wait_trap"),
	  SYS("libdispatch", 0x3a7c, "_dispatch_sema4_wait"), APP("ss_widget_demo")}},
	{"recursive Fibonacci in a step",
	 0,
	 OUTER_EVENT,
	 {APP("stall_fib"), APP("step_fib"), APP("stall_run_steps")}},
	{"tree sum on tap",
	 0,
	 OUTER_EVENT,
	 {APP_IN("tree_sum", "sat_add"), APP("stall_tree_score")}},
	{"tree depth on tap", 0, OUTER_EVENT, {APP("tree_depth"), APP("stall_tree_score")}},
	{"checksum of a block",
	 0,
	 OUTER_DISPATCH,
	 {APP_IN("stall_checksum_block", "sat_add"), APP("stall_digest_string")}},
	{"odd/even steps",
	 0,
	 OUTER_EVENT,
	 {APP_IN("step_odd", "sat_add"), APP("step_even"), APP("stall_run_steps")}},
	{"analytics flush",
	 0,
	 OUTER_DISPATCH,
	 {VENDOR("AnalyticsSDK", 0x8c10), VENDOR("AnalyticsSDK", 0x7f2c),
	  SYS("libdispatch", 0x5910, "_dispatch_client_callout")}},
	{"scaling a double",
	 0,
	 OUTER_DISPLAY,
	 {APP_IN("geo::describe(double)", "geo::detail::scale(double, double)"), APP("geo_run")}},
	{"vector length",
	 1,
	 OUTER_DISPLAY,
	 {APP_IN("geo::describe(geo::Vec2<int> const&)", "geo::Vec2<int>::length2() const"),
	  APP("geo_run")}},
	{"max of ints",
	 0,
	 OUTER_DISPLAY,
	 {APP_IN("int geo::max_of<int>(int const*, int)",
		 "int geo::detail::clamp<int>(int, int, int)"),
	  APP("geo_run")}},
	{"memmove of a large buffer",
	 0,
	 OUTER_EVENT,
	 {SYS("libsystem_platform", 0x1c24, "_platform_memmove"), APP("stall_checksum_block"),
	  APP("stall_digest_string")}},
	{"circle area",
	 0,
	 OUTER_DISPLAY,
	 {APP_IN("geo::Circle::area() const", "double geo::detail::square<double>(double)"),
	  APP("geo::total_area(geo::Shape* const*, int)"), APP("geo_run")}},
	{"rect area",
	 0,
	 OUTER_DISPLAY,
	 {APP("geo::Rect::area() const"), APP("geo::total_area(geo::Shape* const*, int)"),
	  APP("geo_run")}},
	{"callback counter",
	 0,
	 OUTER_DISPATCH,
	 {APP("geo::(anonymous namespace)::hidden_counter(int)"), APP("geo::run_callbacks(int)"),
	  APP("geo_run")}},
	{"widget factory",
	 0,
	 OUTER_EVENT,
	 {APP_IN("+[SSWidget widgetWithDepth:]", "clamp_int"), APP("ss_widget_demo")}},
	{"average stall metric",
	 1,
	 OUTER_EVENT,
	 {APP("-[SSWidget(Metrics) averageStall]"), APP("ss_widget_demo")}},
	{"block run by a widget",
	 0,
	 OUTER_DISPATCH,
	 {APP("__ss_widget_demo_block_invoke"), APP("-[SSWidget runWithBlock:]"),
	  APP("ss_widget_demo")}},
	{"aux score",
	 0,
	 OUTER_EVENT,
	 {APP_IN("stall_aux_score", "clamp_int"), APP("stall_run_steps")}},
	{"spin step", 0, OUTER_EVENT, {APP("step_spin"), APP("stall_run_steps")}},
	{"scaled sum",
	 0,
	 OUTER_DISPLAY,
	 {APP("double geo::sum_scaled<double>(double const*, int, double)"), APP("geo_run")}},
	/* The app's Swift (tests/fixtures/src/swift_frames.c), as the
	 * symbolizer names it (SPEC §3.6). */
	{"feed layout in the reload closure",
	 0,
	 OUTER_EVENT,
	 {APP_IN("closure #1 () in FeedViewController.reload(animated: Bool)",
		 "FeedViewController.layout()"),
	  APP("FeedViewController.reload(animated: Bool)"), APP("FeedViewController.viewDidLoad()"),
	  APP("@objc FeedViewController.viewDidLoad()")}},
	{"feed store read on the main queue",
	 1,
	 OUTER_DISPATCH,
	 {APP("static FeedStore.shared.getter"), APP("FeedStore.items.getter"),
	  APP("closure #1 () in FeedViewController.reload(animated: Bool)")}},
	{"feed store opened at launch",
	 0,
	 OUTER_EVENT,
	 {APP("FeedStore.init(url: URL)"), APP("FeedViewController.viewDidLoad()"),
	  APP("@objc FeedViewController.viewDidLoad()")}},
};
#define NSTACKS (sizeof stacks / sizeof stacks[0])

typedef struct version_row {
	const char *version, *build;
	int released; /* days before today */
} version_row;

/* Oldest first; the last is "the newest version". */
static const version_row versions[] = {
	{"2.3.0", "230", 60},
	{"2.4.0", "241", 5},
	{"2.5.0", "250", 2},
};
#define NVERSIONS (sizeof versions / sizeof versions[0])

typedef struct os_row {
	const char *version, *build;
} os_row;

static const os_row oses[] = {{"16.7.2", "20H115"}, {"17.1.2", "21B101"}, {"17.2", "21C62"}};
#define NOSES (sizeof oses / sizeof oses[0])

static const char *const devices[] = {"iPhone12,1", "iPhone13,2", "iPhone14,2",
				      "iPhone14,5", "iPhone15,2", "iPhone15,3",
				      "iPad13,4"};
#define NDEVICES (sizeof devices / sizeof devices[0])

/* How often a user of each version stalls, relative to the others: 2.4.0
 * fixed some stalls, 2.5.0 brought more (with the stacks' own changes). */
static const double version_stalls[NVERSIONS] = {1.0, 0.8, 1.15};

/* Share of a user's days they open the app (and check in), per mille. */
#define ACTIVE_PER_MILLE 800

/* Share of a day's reports by UTC hour: evenings are busy. */
static const unsigned hourly[24] = {3, 2, 2, 1, 1, 1, 2, 3, 4, 5, 5, 5,
				    6, 6, 5, 5, 5, 6, 7, 8, 8, 7, 5, 4};

/* How many MetricKit payloads and KSCrash reports a day brings. */
#define METRICKIT_PER_DAY 4
#define KSCRASH_PER_DAY 6
/* Share (per mille) of native reports that carry their samples. */
#define SAMPLED_PER_MILLE 150

/* ---- PRNG: splitmix64, seeded; every draw comes from here ------------------- */

typedef srv_demo_rng rng;

uint64_t srv_demo_rand(rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint64_t srv_demo_below(rng *r, uint64_t n)
{
	return n ? srv_demo_rand(r) % n : 0;
}

double srv_demo_unit(rng *r)
{
	return (double)(srv_demo_rand(r) >> 11) / 9007199254740992.0;
}

/* FNV-1a of TEXT, then mixed: stable names → stable UUIDs. */
static uint64_t text_hash(const char *text, uint64_t salt)
{
	uint64_t h = 0xcbf29ce484222325ull ^ salt;
	for (const char *p = text; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	rng r = {h};
	return srv_demo_rand(&r);
}

static void uuid_of(const char *name, const char *variant, char out[37])
{
	uint64_t a = text_hash(name, text_hash(variant, 1)), b = text_hash(variant, a);
	uint8_t u[16];
	for (int i = 0; i < 8; i++) {
		u[i] = (uint8_t)(a >> (8 * i));
		u[8 + i] = (uint8_t)(b >> (8 * i));
	}
	sym_uuid_format(u, out);
}

/* ---- resolving the tables against the dSYM -------------------------------- */

typedef struct resolved_frame {
	int image;        /* -1: the app, else images[] */
	uint64_t offset;  /* from the image's start */
	const char *hint; /* static */
} resolved_frame;

typedef struct resolved_stack {
	resolved_frame frames[MAX_FRAMES];
	size_t n;
} resolved_stack;

struct srv_demo_set {
	char uuid[37];
	uint64_t text_size;
	resolved_stack stacks[NSTACKS];
};

/*
 * The address in FUNCTION (the outermost frame of a lookup) to use: where
 * INLINED is inlined into it when given; else one inlined call deep when
 * there is one (the stack view shows an inline frame, and the two
 * innermost identities stay the function's own), else any with a line.
 */
static int find_function(const sym_cache *cache, uint64_t lo, uint64_t hi, const char *function,
			 const char *inlined, uint64_t *out)
{
	sym_frame f[SYM_MAX_FRAMES];
	int best = 0;
	for (uint64_t a = lo; a < hi; a += 4) {
		size_t n = sym_cache_lookup(cache, a, f, SYM_MAX_FRAMES);
		if (n == 0 || strcmp(f[n - 1].function, function) != 0 || f[0].line == 0)
			continue;
		int score;
		if (inlined)
			score = n >= 2 && !strcmp(f[0].function, inlined) ? 3 : 0;
		else
			score = n == 2 ? 3 : n == 1 ? 2 : 1;
		if (score > best) {
			best = score;
			*out = a;
			if (score == 3)
				break;
		}
	}
	return best > 0 ? 0 : -1;
}

static int image_index(const char *key)
{
	for (size_t i = 0; i < NIMAGES; i++)
		if (!strcmp(images[i].key, key))
			return (int)i;
	return -1;
}

static int resolve_frame(const sym_cache *cache, const sym_slice_info *info,
			 const frame_row *row, resolved_frame *out, char *err, size_t errcap)
{
	memset(out, 0, sizeof *out);
	out->hint = row->hint;
	if (row->image) {
		out->image = image_index(row->image);
		out->offset = row->offset;
		if (out->image < 0 || row->offset >= images[out->image].size) {
			snprintf(err, errcap, "demo table: bad frame %s+0x%llx", row->image,
				 (unsigned long long)row->offset);
			return -1;
		}
		return 0;
	}
	uint64_t addr;
	if (find_function(cache, info->text_vmaddr, info->text_vmaddr + info->text_vmsize,
			  row->function, row->inlined, &addr) < 0) {
		snprintf(err, errcap, "the demo dSYM has no function %s%s%s", row->function,
			 row->inlined ? " inlining " : "", row->inlined ? row->inlined : "");
		return -1;
	}
	out->image = -1;
	out->offset = addr - info->text_vmaddr;
	return 0;
}

static int append(const sym_cache *cache, const sym_slice_info *info, resolved_stack *st,
		  const frame_row *rows, size_t n, char *err, size_t errcap)
{
	for (size_t i = 0; i < n && (rows[i].image || rows[i].function); i++) {
		if (st->n == MAX_FRAMES) {
			snprintf(err, errcap, "demo table: a stack over %d frames", MAX_FRAMES);
			return -1;
		}
		if (resolve_frame(cache, info, &rows[i], &st->frames[st->n++], err, errcap) < 0)
			return -1;
	}
	return 0;
}

srv_demo_set *srv_demo_set_new(const uint8_t *dwarf, size_t len, char *err, size_t errcap)
{
	sym_object *obj = NULL;
	sym_cache *cache = NULL;
	uint8_t *buf = NULL;
	size_t buf_len = 0, slice;
	sym_error serr;
	srv_demo_set *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errcap, "out of memory");
		return NULL;
	}
	int rc = sym_object_from_memory(dwarf, len, &obj, &serr);
	if (rc == SYM_OK)
		rc = sym_object_select(obj, SYM_ARCH_UNKNOWN, &slice, &serr);
	if (rc == SYM_OK)
		rc = sym_cache_build(obj, slice, &buf, &buf_len, NULL, &serr);
	if (rc == SYM_OK)
		rc = sym_cache_from_memory(buf, buf_len, &cache, &serr);
	if (rc != SYM_OK) {
		snprintf(err, errcap, "the demo dSYM: %s", serr.msg);
		goto fail;
	}
	sym_slice_info info;
	sym_object_slice_info(obj, slice, &info);
	sym_uuid_format(info.uuid, s->uuid);
	s->text_size = info.text_vmsize;
	for (size_t i = 0; i < NSTACKS; i++) {
		resolved_stack *st = &s->stacks[i];
		if (append(cache, &info, st, stacks[i].frames, 8, err, errcap) < 0 ||
		    append(cache, &info, st, outers[stacks[i].outer], 8, err, errcap) < 0 ||
		    append(cache, &info, st, run_loop, sizeof run_loop / sizeof run_loop[0], err,
			   errcap) < 0)
			goto fail;
	}
	sym_cache_close(cache);
	free(buf);
	sym_object_free(obj);
	return s;
fail:
	sym_cache_close(cache);
	free(buf);
	sym_object_free(obj);
	free(s);
	return NULL;
}

void srv_demo_set_free(srv_demo_set *s)
{
	free(s);
}

const char *srv_demo_set_uuid(const srv_demo_set *s)
{
	return s->uuid;
}

const char *srv_demo_set_image_name(const srv_demo_set *s)
{
	(void)s;
	return APP_IMAGE;
}

const char *const srv_demo_whitelist[SRV_DEMO_WHITELISTED] = {"tester-1", "tester-2"};

/* ---- making reports ----------------------------------------------------------- */

typedef struct user_row {
	char id[16];
	int os, device;
	int lag; /* days before this user updates */
} user_row;

/* One report's device: where its images were loaded. */
typedef struct layout {
	uint64_t app_load;       /* the app's __TEXT */
	uint64_t vendor_load;    /* first vendor framework */
	uint64_t shared_cache;   /* system images */
	const os_row *os;
} layout;

static uint64_t image_load(const layout *l, int image)
{
	if (image < 0)
		return l->app_load;
	return (images[image].system ? l->shared_cache : l->vendor_load) + images[image].base;
}

static void hex(uint64_t v, char out[24])
{
	snprintf(out, 24, "0x%llx", (unsigned long long)v);
}

static uint64_t frame_address(const layout *l, const resolved_frame *f, size_t index)
{
	/* A caller's frame is a return address: the instruction after the
	 * call, which the server looks up at address - 1. */
	return image_load(l, f->image) + f->offset + (index > 0 ? 4 : 0);
}

static json_t *native_frames(const layout *l, const resolved_stack *st, size_t skip)
{
	json_t *a = json_array();
	for (size_t i = skip; a && i < st->n; i++) {
		char addr[24];
		hex(frame_address(l, &st->frames[i], i - skip), addr);
		json_array_append_new(a, st->frames[i].hint ? json_pack("{s:s,s:s}", "address", addr,
									"symbol", st->frames[i].hint)
							    : json_string(addr));
	}
	return a;
}

static json_t *native_images(const srv_demo_set *s, const layout *l)
{
	char load[24], uuid[37];
	hex(l->app_load, load);
	json_t *a = json_array();
	json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:I}", "name", APP_DIR "/" APP_IMAGE,
					   "uuid", s->uuid, "arch", "arm64", "load_address", load,
					   "size", (json_int_t)s->text_size));
	for (size_t i = 0; i < NIMAGES; i++) {
		hex(image_load(l, (int)i), load);
		uuid_of(images[i].path, images[i].system ? l->os->version : "vendor", uuid);
		json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:I}", "name", images[i].path,
						   "uuid", uuid, "arch", "arm64", "load_address", load,
						   "size", (json_int_t)images[i].size));
	}
	return a;
}

/* The main thread waits in the kernel's message trap of a helper thread. */
static json_t *event_thread(const layout *l)
{
	char a[24], b[24];
	int kernel = image_index("libsystem_kernel"), cf = image_index("CoreFoundation");
	hex(image_load(l, kernel) + 0x1a34, a);
	hex(image_load(l, cf) + 0x7f8a0 + 4, b);
	return json_pack("{s:s,s:[{s:s,s:s},{s:s,s:s}]}", "name",
			 "com.apple.uikit.eventfetch-thread", "frames", "address", a, "symbol",
			 "mach_msg2_trap", "address", b, "symbol", "__CFRunLoopServiceMachPort");
}

static void utc_text(time_t t, char out[32])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* How often stack I stalls in version V, relative to the others. */
static double stack_weight(size_t i, int v)
{
	if (stacks[i].since > v)
		return 0;
	double w = pow((double)(i + 1), -1.1);
	return v >= regression.from && !strcmp(stacks[i].what, regression.what)
		       ? w * regression.factor
		       : w;
}

/* Zipf-like pick among the stacks of version V. */
static size_t pick_stack(rng *r, int v)
{
	double total = 0;
	for (size_t i = 0; i < NSTACKS; i++)
		total += stack_weight(i, v);
	double x = srv_demo_unit(r) * total;
	size_t last = 0;
	for (size_t i = 0; i < NSTACKS; i++) {
		if (stack_weight(i, v) == 0)
			continue;
		last = i;
		x -= stack_weight(i, v);
		if (x < 0)
			return i;
	}
	return last;
}

/* The newest version USER runs AGO days before today. */
static int version_of(const user_row *u, int ago)
{
	int v = 0;
	for (int i = 0; i < (int)NVERSIONS; i++)
		if (versions[i].released - u->lag >= ago)
			v = i;
	return v;
}

/* 250 ms to 30 s, short ones far more often. */
static int64_t duration_ms(rng *r)
{
	double x = pow(srv_demo_unit(r), 1.8);
	return (int64_t)(250.0 * exp(x * log(120.0)) / 10.0) * 10;
}

typedef struct gen {
	const srv_demo_set *set;
	const srv_demo_options *opt;
	rng r;
	/* USERS, then the whitelisted testers (srv_demo_whitelist). */
	user_row users[USERS + SRV_DEMO_WHITELISTED];
	/* The day being made: who may send reports (active and sampled, or
	 * whitelisted), as indexes into users. */
	int eligible[USERS + SRV_DEMO_WHITELISTED];
	size_t neligible;
	char day_tag[16]; /* today's date: report ids are per seed and day */
	size_t serial;
} gen;

/* A user who may report on the day being made (AGO days before today),
 * those of a version that stalls more picked more often. */
static const user_row *pick_user(gen *g, int ago)
{
	double most = 0;
	for (size_t v = 0; v < NVERSIONS; v++)
		most = fmax(most, version_stalls[v]);
	for (;;) {
		const user_row *u = &g->users[g->eligible[srv_demo_below(&g->r, g->neligible)]];
		if (srv_demo_unit(&g->r) * most < version_stalls[version_of(u, ago)])
			return u;
	}
}

static layout make_layout(gen *g, const user_row *u)
{
	layout l;
	l.app_load = 0x100000000ull + srv_demo_below(&g->r, 0x4000) * 0x4000;
	l.vendor_load = l.app_load + 0x1000000;
	l.shared_cache = 0x180000000ull + srv_demo_below(&g->r, 0x2000) * 0x4000;
	l.os = &oses[u->os];
	return l;
}

static json_t *native_report(gen *g, time_t at, int ago)
{
	const user_row *u = pick_user(g, ago);
	int v = version_of(u, ago);
	size_t k = pick_stack(&g->r, v);
	const resolved_stack *st = &g->set->stacks[k];
	layout l = make_layout(g, u);
	int64_t ms = duration_ms(&g->r);
	const char *kind = ms >= 8000 && srv_demo_below(&g->r, 3) == 0 ? "hang" : "stall";
	char id[64], ts[32];
	snprintf(id, sizeof id, "demo-%llu-%s-%06zu", (unsigned long long)g->opt->seed, g->day_tag,
		 g->serial++);
	/* Devices upload a while after the stall. */
	utc_text(at - (time_t)srv_demo_below(&g->r, 1800) - 1, ts);
	json_t *main_thread = json_pack("{s:s,s:b,s:o}", "name", "main", "main", 1, "frames",
					native_frames(&l, st, 0));
	json_t *rep = json_pack(
		"{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:o,s:[o,o]}", "report_id", id,
		"app_version", versions[v].version, "build", versions[v].build, "os", "iOS",
		"os_version", l.os->version, "device", devices[u->device], "user_id", u->id,
		"timestamp", ts, "kind", kind, "duration_ms", (json_int_t)ms, "images",
		native_images(g->set, &l), "threads", main_thread, event_thread(&l));
	if (rep && srv_demo_below(&g->r, 1000) < SAMPLED_PER_MILLE) {
		/* Matrix's ring buffer: the stalled stack, every fifth sample
		 * its caller's (the main thread moved on briefly), so the
		 * stalled stack stays the heaviest. */
		json_t *samples = json_array();
		int64_t n = ms / 50 < 60 ? ms / 50 : 60;
		for (int64_t t = 0; t < n; t++)
			json_array_append_new(samples,
					      json_pack("{s:I,s:o}", "t_ms", (json_int_t)(t * 50),
							"frames",
							native_frames(&l, st, t % 5 == 4)));
		json_object_set_new(rep, "samples", samples);
	}
	return rep;
}

/* MetricKit's tree: root first, each frame the only child of the one
 * outside it, every frame in all of the hang's samples. */
static json_t *metrickit_tree(const srv_demo_set *s, const layout *l, const resolved_stack *st,
			      const char *os_version, int samples)
{
	json_t *child = NULL;
	for (size_t i = 0; i < st->n; i++) {
		const resolved_frame *f = &st->frames[i];
		char uuid[37];
		const char *name;
		if (f->image < 0) {
			snprintf(uuid, sizeof uuid, "%s", s->uuid);
			name = APP_IMAGE;
		} else {
			uuid_of(images[f->image].path,
				images[f->image].system ? os_version : "vendor", uuid);
			name = strrchr(images[f->image].path, '/') + 1;
		}
		uint64_t address = frame_address(l, f, i);
		json_t *frame = json_pack("{s:s,s:s,s:I,s:I,s:i}", "binaryUUID", uuid, "binaryName",
					  name, "offsetIntoBinaryTextSegment",
					  (json_int_t)(address - image_load(l, f->image)), "address",
					  (json_int_t)address, "sampleCount", samples);
		if (child)
			json_object_set_new(frame, "subFrames", json_pack("[o]", child));
		child = frame;
	}
	return child;
}

static json_t *metrickit_payload(gen *g, const user_row *u, time_t at, int ago)
{
	int v = version_of(u, ago);
	layout l = make_layout(g, u);
	char begin[32], end[32], os[64];
	utc_text(at - DAY_SECONDS, begin);
	utc_text(at - 60, end);
	snprintf(os, sizeof os, "iPhone OS %s (%s)", l.os->version, l.os->build);
	const resolved_stack *st = &g->set->stacks[pick_stack(&g->r, v)];
	int64_t ms = duration_ms(&g->r);
	char duration[32];
	snprintf(duration, sizeof duration, "%.2f sec", (double)ms / 1000.0);
	json_t *root = metrickit_tree(g->set, &l, st, l.os->version, (int)(ms / 10));
	json_t *hangs = json_pack(
		"[{s:s,s:{s:b,s:[{s:b,s:[o]}]},s:{s:s,s:s,s:s,s:s,s:s,s:s}}]", "version",
		"1.0.0", "callStackTree", "callStackPerThread", 0, "callStacks",
		"threadAttributed", 1, "callStackRootFrames", root, "diagnosticMetaData",
		"appVersion", versions[v].version, "appBuildVersion", versions[v].build,
		"deviceType", devices[u->device], "osVersion", os, "platformArchitecture",
		"arm64", "hangDuration", duration);
	return json_pack("{s:s,s:s,s:o}", "timeStampBegin", begin, "timeStampEnd", end,
			 "hangDiagnostics", hangs);
}

static json_t *kscrash_report(gen *g, time_t at, int ago)
{
	const user_row *u = pick_user(g, ago);
	int v = version_of(u, ago);
	const resolved_stack *st = &g->set->stacks[pick_stack(&g->r, v)];
	layout l = make_layout(g, u);
	char id[64], ts[32];
	snprintf(id, sizeof id, "demo-ks-%llu-%s-%06zu", (unsigned long long)g->opt->seed,
		 g->day_tag, g->serial++);
	utc_text(at - (time_t)srv_demo_below(&g->r, 3600) - 1, ts);
	json_t *bin = json_array();
	json_array_append_new(bin, json_pack("{s:s,s:I,s:I,s:s,s:i,s:i}", "name",
					     APP_DIR "/" APP_IMAGE, "image_addr",
					     (json_int_t)l.app_load, "image_size",
					     (json_int_t)g->set->text_size, "uuid", g->set->uuid,
					     "cpu_type", 16777228, "cpu_subtype", 0));
	for (size_t i = 0; i < NIMAGES; i++) {
		char uuid[37];
		uuid_of(images[i].path, images[i].system ? l.os->version : "vendor", uuid);
		json_array_append_new(bin, json_pack("{s:s,s:I,s:I,s:s,s:i,s:i}", "name",
						     images[i].path, "image_addr",
						     (json_int_t)image_load(&l, (int)i), "image_size",
						     (json_int_t)images[i].size, "uuid", uuid,
						     "cpu_type", 16777228, "cpu_subtype", 0));
	}
	json_t *contents = json_array();
	for (size_t i = 0; i < st->n; i++) {
		json_t *f = json_pack("{s:I}", "instruction_addr",
				      (json_int_t)frame_address(&l, &st->frames[i], i));
		if (st->frames[i].hint)
			json_object_set_new(f, "symbol_name", json_string(st->frames[i].hint));
		json_array_append_new(contents, f);
	}
	/* Matrix's dump types: 2001 a foreground stall, 2010 stalled and
	 * killed. */
	const char *dump = srv_demo_below(&g->r, 4) == 0 ? "2010" : "2001";
	return json_pack("{s:{s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s,s:s,s:s},s:{s:s},s:o,"
			 "s:{s:{s:s,s:{s:s}},s:[{s:i,s:s,s:s,s:{s:o}}]}}",
			 "report", "id", id, "timestamp", ts, "type", "standard", "system",
			 "CFBundleShortVersionString", versions[v].version, "CFBundleVersion",
			 versions[v].build, "system_name", "iOS", "system_version",
			 l.os->version, "os_version", l.os->build, "machine",
			 devices[u->device], "user", "user_id", u->id, "binary_images", bin,
			 "crash", "error", "type", "user", "user_reported", "name", dump,
			 "threads", "index", 0, "name", "main", "dispatch_queue",
			 "com.apple.main-thread", "backtrace", "contents", contents);
}

/* ---- the requests ------------------------------------------------------------- */

int srv_demo_push(srv_demo_list *l, srv_demo_route route, time_t at, const char *user, json_t *body,
		  size_t reports)
{
	if (!body)
		return -1;
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		srv_demo_request *v = realloc(l->v, cap * sizeof *v);
		if (!v) {
			free(text);
			return -1;
		}
		l->v = v;
		l->cap = cap;
	}
	srv_demo_request *r = &l->v[l->n++];
	memset(r, 0, sizeof *r);
	r->route = route;
	r->received_at = at;
	snprintf(r->user, sizeof r->user, "%s", user ? user : "");
	r->body = text;
	r->reports = reports;
	return 0;
}

void srv_demo_day(const srv_demo_options *opt, int d, time_t *start, int *ago, time_t *span)
{
	time_t today = opt->now - opt->now % DAY_SECONDS;
	*ago = opt->days - 1 - d;
	*start = today - (time_t)*ago * DAY_SECONDS;
	/* Today so far, a minute's margin before now. */
	*span = *ago ? DAY_SECONDS : opt->now - 60 - *start;
	if (*span < 1)
		*span = 1;
}

int srv_demo_open_day(srv_demo_list *l, srv_demo_rng *r, const char *app, time_t start, int ago,
		      const srv_demo_user *users, size_t n, int *eligible, size_t *neligible)
{
	char day[ING_DAY_LEN];
	ing_utc_day(start, day);
	json_t *calls = json_array();
	*neligible = 0;
	for (size_t i = 0; i < n && calls; i++) {
		const srv_demo_user *u = &users[i];
		if (!u->tester && srv_demo_below(r, 1000) >= ACTIVE_PER_MILLE)
			continue;
		/* As the native client: the OS version and device too, so rates
		 * under those filters have their own denominators (SPEC §10.2). */
		json_array_append_new(calls, json_pack("{s:s,s:s,s:s,s:s}", "user_id", u->id,
						       "app_version", u->app_version, "os_version",
						       u->os_version, "device", u->device));
		if (u->tester || ing_sampled(app, u->id, day, SRV_DEMO_SAMPLE_RATE))
			eligible[(*neligible)++] = (int)i;
	}
	/* An hour into the day: the backfill takes no time in the future. */
	time_t at = ago ? start + 3600 : 0;
	return srv_demo_push(l, SRV_DEMO_CHECK_INS, at, NULL,
			     json_pack("{s:o}", "check_ins", calls), 0);
}

/* The day starting at START (AGO days before today) for G's users and
 * testers, as srv_demo_open_day. */
static int open_day(gen *g, srv_demo_list *l, time_t start, int ago)
{
	srv_demo_user users[USERS + SRV_DEMO_WHITELISTED];
	for (int i = 0; i < USERS + SRV_DEMO_WHITELISTED; i++) {
		const user_row *u = &g->users[i];
		users[i] = (srv_demo_user){u->id, versions[version_of(u, ago)].version,
					   oses[u->os].version, devices[u->device], i >= USERS};
	}
	return srv_demo_open_day(l, &g->r, g->opt->app, start, ago, users,
				 USERS + SRV_DEMO_WHITELISTED, g->eligible, &g->neligible);
}

/* The day's MetricKit payloads and KSCrash reports, at random times of
 * the SPAN seconds from START. */
static int other_formats(gen *g, srv_demo_list *l, time_t start, time_t span, int ago)
{
	int rc = 0;
	for (int i = 0; i < METRICKIT_PER_DAY && rc == 0; i++) {
		const user_row *u = pick_user(g, ago);
		time_t at = start + (time_t)((double)span * srv_demo_unit(&g->r));
		rc = srv_demo_push(l, SRV_DEMO_METRICKIT, ago ? at : 0, u->id,
				   metrickit_payload(g, u, at, ago), 1);
	}
	json_t *ks = json_array();
	time_t at = start + (time_t)((double)span * srv_demo_unit(&g->r));
	for (int i = 0; i < KSCRASH_PER_DAY && ks; i++)
		json_array_append_new(ks, kscrash_report(g, at, ago));
	if (rc == 0)
		return srv_demo_push(l, SRV_DEMO_KSCRASH, ago ? at : 0, NULL, ks, KSCRASH_PER_DAY);
	json_decref(ks);
	return rc;
}

void srv_demo_requests_free(srv_demo_request *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].body);
	free(r);
}

int srv_demo_requests(const srv_demo_set *s, const srv_demo_options *opt,
		      srv_demo_request **out, size_t *out_n)
{
	gen g = {.set = s, .opt = opt, .r = {opt->seed}};
	time_t today = opt->now - opt->now % DAY_SECONDS;
	struct tm tm;
	gmtime_r(&today, &tm);
	strftime(g.day_tag, sizeof g.day_tag, "%Y%m%d", &tm);
	for (int i = 0; i < USERS + SRV_DEMO_WHITELISTED; i++) {
		user_row *u = &g.users[i];
		if (i < USERS)
			snprintf(u->id, sizeof u->id, "user-%03d", i + 1);
		else
			snprintf(u->id, sizeof u->id, "%s", srv_demo_whitelist[i - USERS]);
		u->os = (int)srv_demo_below(&g.r, NOSES);
		u->device = (int)srv_demo_below(&g.r, NDEVICES);
		/* Testers run the newest build the day it ships. */
		u->lag = i < USERS ? (int)srv_demo_below(&g.r, 3) : 0;
	}
	unsigned hour_total = 0;
	for (int h = 0; h < 24; h++)
		hour_total += hourly[h];
	/* Slightly more reports each day, as the app's users grow. */
	double day_total = 0;
	for (int d = 0; d < opt->days; d++)
		day_total += 1.0 + 0.1 * d;

	srv_demo_list l = {0};
	size_t made = 0;
	int rc = 0;
	for (int d = 0; d < opt->days && rc == 0; d++) {
		int ago;
		time_t start, span;
		/* Today: the day's hours squeezed into what has passed. */
		srv_demo_day(opt, d, &start, &ago, &span);
		rc = open_day(&g, &l, start, ago);
		if (rc < 0)
			break;
		size_t day_reports = d == opt->days - 1
					     ? opt->reports - made
					     : (size_t)((double)opt->reports * (1.0 + 0.1 * d) / day_total);
		size_t placed = 0;
		for (int h = 0; h < 24 && rc == 0; h++) {
			size_t n = h == 23 ? day_reports - placed
					   : (size_t)day_reports * hourly[h] / hour_total;
			placed += n;
			time_t at =
				start + (time_t)((double)span * (h + srv_demo_unit(&g.r)) / 24.0);
			/* Today's reports arrive now, through the devices' route. */
			time_t via = ago ? at : 0;
			json_t *batch = json_array();
			for (size_t i = 0; i < n && batch; i++)
				json_array_append_new(batch, native_report(&g, at, ago));
			if (n)
				rc = srv_demo_push(&l, SRV_DEMO_NATIVE, via, NULL,
						   json_pack("{s:o}", "reports", batch), n);
			else
				json_decref(batch);
		}
		made += day_reports;
		if (rc == 0)
			rc = other_formats(&g, &l, start, span, ago);
	}
	if (rc < 0) {
		srv_demo_requests_free(l.v, l.n);
		return -1;
	}
	*out = l.v;
	*out_n = l.n;
	return 0;
}
