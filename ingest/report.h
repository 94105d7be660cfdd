/*
 * report.h — the one internal report model every ingest format maps to
 * (native v1, MetricKit, KSCrash, .ips), and the arena that owns it.
 *
 * Memory: a report and everything it points to (strings, arrays) live in one
 * ing_arena; ing_arena_free releases them all at once. Parsers never free
 * individual pieces, so a parser that fails half-way leaks nothing.
 *
 * Addresses are absolute runtime addresses as the device saw them. Formats
 * that give image-relative offsets (MetricKit, .ips) are mapped to
 * load_address + offset; when a format gives no load address the parser
 * assigns one (documented per parser) so that address - load_address is the
 * offset the device reported.
 */
#ifndef STALLSCOPE_INGEST_REPORT_H
#define STALLSCOPE_INGEST_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/errors.h"
#include "symbolizer/symbolizer.h"

/* ---- arena ---------------------------------------------------------- */

typedef struct ing_arena ing_arena;

/* A new arena that refuses to grow past LIMIT bytes (0 = no limit). */
ing_arena *ing_arena_new(size_t limit);
void ing_arena_free(ing_arena *arena);
/* Zeroed, 16-byte aligned; NULL when out of memory or over the limit.
 * SIZE 0 yields a valid, unique pointer. */
void *ing_arena_alloc(ing_arena *arena, size_t size);
/* Overflow-checked N * SIZE. */
void *ing_arena_calloc(ing_arena *arena, size_t n, size_t size);
/* NUL-terminated copy of LEN bytes of S; NULL on failure. */
char *ing_arena_strndup(ing_arena *arena, const char *s, size_t len);
char *ing_arena_strdup(ing_arena *arena, const char *s);
/* Bytes handed out so far plus chunk overhead (what counts against LIMIT). */
size_t ing_arena_used(const ing_arena *arena);
/* True once an allocation was refused because of LIMIT (not malloc). */
bool ing_arena_over_limit(const ing_arena *arena);

/* ---- model ---------------------------------------------------------- */

typedef enum ing_kind {
	ING_KIND_STALL = 0, /* main thread stalled, app survived */
	ING_KIND_HANG,	    /* stalled and killed (watchdog) */
	ING_KIND_CPU,	    /* CPU exception / sustained high CPU */
	ING_KIND_CRASH,
	/* Android, Matrix TraceCanary's Trace_EvilMethod details (SPEC §13) */
	ING_KIND_SLOW_METHOD,	/* NORMAL: a main-thread message over 700 ms */
	ING_KIND_ANR,		/* ANR, SIGNAL_ANR, SIGNAL_ANR_NATIVE_BACKTRACE */
	ING_KIND_LAG,		/* LAG, LAG_IDLE_HANDLER, LAG_TOUCH */
	ING_KIND_SLOW_STARTUP,	/* STARTUP */
	ING_KIND_THREAD_POLICY, /* PRIORITY_MODIFIED, TIMERSLACK_MODIFIED */
} ing_kind;

/* "stall", "hang", "cpu", "crash", "slow_method", "anr", "lag",
 * "slow_startup", "thread_policy". */
const char *ing_kind_name(ing_kind kind);
/* false for anything else. */
bool ing_kind_parse(const char *name, ing_kind *out);
/* Whether KIND is one of Android's (only the Matrix parser makes them). */
bool ing_kind_is_android(ing_kind kind);

/* Which half of an app a report comes from. */
typedef enum ing_platform {
	ING_PLATFORM_APPLE = 0,
	ING_PLATFORM_ANDROID, /* Matrix TraceCanary (ingest/matrix.h) */
} ing_platform;

typedef struct ing_image {
	const char *name;      /* as the device gave it: path or basename */
	bool has_uuid;
	uint8_t uuid[16];
	sym_arch arch;         /* SYM_ARCH_UNKNOWN when not given */
	uint64_t load_address; /* runtime address of the image's __TEXT */
	uint64_t size;         /* 0 when unknown */
} ing_image;

typedef struct ing_frame {
	uint64_t address;        /* absolute runtime address */
	const char *symbol_hint; /* on-device symbol name, or NULL */
} ing_frame;

/* What an Android frame carries beside its ing_frame (SPEC §13). A frame
 * of Matrix's method-id `stack` has NAME NULL and its ing_frame.address
 * is the method id, resolved through the method mapping of the report's
 * build (image 0); a frame of a `threadStack` is already a name. */
typedef struct ing_java_frame {
	const char *name; /* threadStack: "pkg.Class.method"; NULL: a method id */
	const char *file; /* threadStack: "Foo.java"; NULL when not given */
	int64_t line;	  /* > 0 a line; 0 unknown; -2 a native method */
	int64_t ms;	  /* the stack line's summed duration; -1 when none */
	uint32_t count;	  /* the stack line's merged calls; 0 when none */
} ing_java_frame;

typedef struct ing_stack {
	ing_frame *frames; /* innermost first */
	size_t nframes;
	/* Android reports: one per frame (parallel to FRAMES); NULL for
	 * Apple reports. */
	ing_java_frame *java;
} ing_stack;

typedef struct ing_thread {
	const char *name; /* may be NULL */
	bool main;
	ing_stack stack;
} ing_thread;

typedef struct ing_sample {
	int64_t t_ms; /* milliseconds since the stall started */
	ing_stack stack;
} ing_sample;

/* The longest duration a report may claim, about 11.6 days: no main thread
 * blocks longer, and the server sums durations per group for all time in
 * 64 bits (SPEC §10.1), which claims of 2^53 ms overflow after a thousand
 * reports. Longer claims are refused (native) or read as unknown. */
#define ING_DURATION_MAX_MS INT64_C(1000000000)

typedef struct ing_report {
	const char *report_id; /* client idempotency key (never NULL once parsed) */
	const char *app_version, *build, *os, *os_version, *device;
	const char *os_build;  /* e.g. "21C62"; NULL when unknown */
	/* The body's user id when it has one, else the X-Stallscope-User value
	 * the caller passed to the parser; NULL when neither. */
	const char *user_id;
	const char *timestamp; /* client's ISO 8601 time, kept as metadata */
	ing_kind kind;
	int64_t duration_ms; /* -1 when unknown; at most ING_DURATION_MAX_MS */
	ing_image *images;
	size_t nimages;
	ing_thread *threads;
	size_t nthreads;
	ing_sample *samples;
	size_t nsamples;
	const char *source; /* "native", "metrickit", "kscrash", "ips", "matrix" */
	ing_platform platform;
	/* Android only (NULL otherwise): Matrix's own stackKey, kept as the
	 * report's client_key, and the element's content object as compact
	 * JSON text — kept with the report (the whole stack tree, the
	 * threadStack text, scene, memory) for the report page. */
	const char *client_key;
	const char *matrix_content;
} ing_report;

/* The strings a report is counted under (user_id, app_version,
 * os_version, device) are keys of the per-day group counters' index, and
 * PostgreSQL refuses an index entry over 2,704 bytes: held to 256 bytes
 * each, every report a parser accepts can be counted. The HTTP routes that
 * take a user_id (sampling, whitelist) apply the same cap. */
#define ING_DIMENSION_MAX 256

/* Limits applied by every parser (SPEC §4.1); beyond them the parser fails
 * with ERR_TOO_MANY / ERR_BAD_FIELD naming the field. */
typedef struct ing_limits {
	size_t max_reports;      /* per batch, 1000 */
	size_t max_threads;      /* per report, 64 */
	size_t max_frames;       /* per thread or sample, 2048 */
	size_t max_images;       /* per report, 1024 */
	size_t max_samples;      /* per report, 1024 */
	size_t max_string;       /* bytes per string, 4096 */
	size_t max_dimension;	 /* bytes of user_id, app_version, os_version,
				    device: ING_DIMENSION_MAX */
	size_t max_depth;        /* JSON nesting, 64 (MetricKit trees: see
				    docs/INGEST.md) */
	size_t max_memory;       /* arena bytes per request, 256 MiB */
} ing_limits;

/* The defaults above. */
ing_limits ing_limits_default(void);

/* Why a parse failed: the registry code plus a message naming the field,
 * e.g. "threads[0].frames[3]: not a hex address". */
typedef struct ing_error {
	cm_err code;
	char message[256];
} ing_error;

/* True when TEXT is an ISO 8601 / RFC 3339 date-time:
 * YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), calendar-checked. */
bool ing_is_timestamp(const char *text);

/* Sets *err (code and printf-style message); returns -1 for chaining. */
int ing_error_set(ing_error *err, cm_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Frees nothing: reports live in their arena (see ingest/parse.h). */

#endif
