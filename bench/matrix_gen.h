/*
 * matrix_gen.h — Matrix TraceCanary elements for the load generators
 * (bench/ingest_load.c, bench/dashboard_load.c): content objects as
 * Matrix's tracers build them (../shared/tracecanary/FORMATS.md §3, §4,
 * §7), with method ids from the mapping bench/lib.sh's bench_method_mapping
 * writes. The caller owns every buffer; nothing is allocated.
 */
#ifndef BENCH_MATRIX_GEN_H
#define BENCH_MATRIX_GEN_H

#include <stddef.h>
#include <stdint.h>

/* Matrix trims its stacks to 30 lines. */
#define MG_STACK_LINES 30
/* The heaviest path's length below the dispatch root. */
#define MG_CHAIN_MAX 12

typedef enum mg_kind {
	MG_NORMAL,	  /* slow_method */
	MG_ANR,		  /* anr, with stack and threadStack */
	MG_SIGNAL_ANR,	  /* anr, threadStack only */
	MG_LAG,		  /* lag */
	MG_LAG_TOUCH,	  /* lag */
	MG_STARTUP,	  /* slow_startup */
	MG_PRIORITY,	  /* thread_policy */
	MG_TRACE_STARTUP, /* Trace_StartUp: a measure */
	MG_TRACE_FPS,	  /* Trace_FPS: a measure */
	MG_KINDS,
} mg_kind;

typedef struct mg_element {
	mg_kind kind;
	/* The heaviest path below the root, outermost first: method ids of
	 * the mapping (1 … its size). The innermost two make the level-1
	 * group, the innermost four the level-2 one. */
	uint32_t chain[MG_CHAIN_MAX];
	int nchain;
	uint32_t methods; /* the mapping's size: side branches draw from it */
	int64_t cost_ms;  /* the report's duration */
	int64_t time_ms;  /* Matrix's "time": part of the element's identity */
	int as_line;	  /* sent as an Issue.toString() line, not an object */
} mg_element;

/* The JSON of element E (an object, or a string holding the
 * Issue.toString() line) into BUF of CAP bytes; returns its length (CAP
 * or more when it did not fit). RNG draws the side branches. */
size_t mg_put_element(char *buf, size_t cap, const mg_element *e, uint64_t *rng);

/* The envelope's head up to the "reports" array's opening bracket. */
size_t mg_put_envelope_head(char *buf, size_t cap, const char *app_version, const char *build,
			    const char *user_id, const char *os_version, const char *device);

#endif
