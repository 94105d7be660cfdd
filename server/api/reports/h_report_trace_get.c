/*
 * h_report_trace_get.c — GET /api/v1/reports/{id}/trace (admin token of
 * the report's app): the report's main-thread samples as Chrome Trace
 * Event JSON, loadable in Perfetto or chrome://tracing.
 *
 * As btrace does, consecutive stacks are diffed from the root: frames both
 * share continue, frames that ended get "E" events, new ones "B" events, at
 * the sample's time. Frames are named by symbolizing the stored report
 * again with the debug files there are now; a frame without symbols is
 * named by its hint or image+offset. A report without samples shows its
 * representative stack as one slice per frame over the stall's duration
 * (an Android report's heaviest path, whose ids unnamed yet show as
 * java!#ID).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/matrix.h"
#include "ingest/parse.h"
#include "server/service/clock.h"
#include "server/api/handlers.h"
#include "server/api/reports/report_access.h"
#include "server/service/symbols.h"
#include "store/groups.h"

/* Samples are taken about every 50 ms (Matrix): the last one lasts that. */
#define SAMPLE_MS 50

typedef struct raw_tx {
	srv_report_loc loc;
	char *json;
} raw_tx;

static int raw_cb(st_conn *c, void *cls)
{
	raw_tx *t = cls;
	free(t->json);
	return st_report_raw(c, t->loc.app_id, t->loc.day, t->loc.id, &t->json);
}

/* The display names of a symbolized frame object, innermost first, into
 * NAMES (room for CAP); returns how many. */
static size_t frame_names(const json_t *frame, const char **names, size_t cap, char *buf,
			  size_t bufcap)
{
	const json_t *chain = json_object_get(frame, "frames");
	size_t n = 0;
	for (size_t i = 0; i < json_array_size(chain) && n < cap; i++) {
		const char *fn =
			json_string_value(json_object_get(json_array_get(chain, i), "function"));
		if (fn && fn[0])
			names[n++] = fn;
	}
	if (n || !cap)
		return n;
	/* A Swift hint demangled at ingest, else the hint as sent. */
	const char *hint = json_string_value(json_object_get(frame, "hint_function"));
	if (!hint)
		hint = json_string_value(json_object_get(frame, "symbol_hint"));
	const char *image = json_string_value(json_object_get(frame, "image"));
	const char *offset = json_string_value(json_object_get(frame, "offset"));
	const json_t *method = json_object_get(frame, "method_id");
	if (hint && strcmp(hint, "<redacted>"))
		snprintf(buf, bufcap, "%s", hint);
	else if (json_is_integer(method)) /* Android, without its mapping */
		snprintf(buf, bufcap, "java!#%lld", (long long)json_integer_value(method));
	else if (image && offset)
		snprintf(buf, bufcap, "%s+%s", image, offset);
	else
		snprintf(buf, bufcap, "%s",
			 json_string_value(json_object_get(frame, "address"))
				 ? json_string_value(json_object_get(frame, "address"))
				 : "?");
	names[0] = buf;
	return 1;
}

/* The stack as names from the root down (what a trace nests). */
typedef struct names {
	const char **v;
	size_t n;
	char *scratch; /* names made up for unsymbolized frames */
} names;

static int stack_names(const json_t *frames, names *out)
{
	size_t nf = json_array_size(frames);
	size_t cap = nf * SYM_MAX_FRAMES + 1;
	out->v = calloc(cap, sizeof *out->v);
	out->scratch = calloc(nf ? nf : 1, 64);
	out->n = 0;
	if (!out->v || !out->scratch)
		return -1;
	/* Innermost first in the report; the trace wants the root first. */
	for (size_t k = nf; k-- > 0;) {
		const char *chain[SYM_MAX_FRAMES];
		size_t m = frame_names(json_array_get(frames, k), chain, SYM_MAX_FRAMES,
				       out->scratch + k * 64, 64);
		for (size_t i = m; i-- > 0;)
			out->v[out->n++] = chain[i];
	}
	return 0;
}

static void names_free(names *s)
{
	free(s->v);
	free(s->scratch);
	memset(s, 0, sizeof *s);
}

static int event(json_t *events, const char *name, const char *ph, int64_t ts_us)
{
	return json_array_append_new(events, json_pack("{s:s,s:s,s:s,s:I,s:i,s:i}", "name", name,
						       "cat", "stall", "ph", ph, "ts",
						       (json_int_t)ts_us, "pid", 1, "tid", 1));
}

/* Diffs PREV against NEXT at TS: E for PREV's frames past their common
 * root prefix (innermost first), then B for NEXT's. */
static int transition(json_t *events, const names *prev, const names *next, int64_t ts)
{
	size_t common = 0;
	while (common < prev->n && common < next->n && !strcmp(prev->v[common], next->v[common]))
		common++;
	int rc = 0;
	for (size_t i = prev->n; rc == 0 && i-- > common;)
		rc = event(events, prev->v[i], "E", ts);
	for (size_t i = common; rc == 0 && i < next->n; i++)
		rc = event(events, next->v[i], "B", ts);
	return rc;
}

/* The frames of the representative stack STACK: its own, or those of the
 * thread it names. */
static const json_t *stack_frames(const json_t *threads, const json_t *stack)
{
	const json_t *thread = json_object_get(stack, "thread");
	if (json_is_integer(thread))
		return json_object_get(json_array_get(threads, (size_t)json_integer_value(thread)),
				       "frames");
	return json_object_get(stack, "frames");
}

/* THREADS and STACK: the symbolized texts of ing_symbolized, parsed. */
static json_t *build_trace(const ing_report *r, const json_t *threads, const json_t *stack)
{
	json_t *events = threads && stack ? json_array() : NULL;
	if (!events)
		return NULL;
	json_array_append_new(events,
			      json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name", "ph",
					"M", "pid", 1, "tid", 1, "args", "name", "main thread"));
	names prev = {0}, cur = {0};
	int rc = 0;
	int64_t end_ms = 0;
	/* The samples were symbolized as threads 1…n after the report's own
	 * threads (see below); without samples, the representative stack. */
	size_t first = r->nthreads, count = r->nsamples;
	for (size_t i = 0; rc == 0 && i < (count ? count : 1); i++) {
		const json_t *frames =
			count ? json_object_get(json_array_get(threads, first + i), "frames")
			      : stack_frames(threads, stack);
		int64_t t_ms = count ? r->samples[i].t_ms : 0;
		rc = stack_names(frames, &cur);
		if (rc == 0)
			rc = transition(events, &prev, &cur, t_ms * 1000);
		names_free(&prev);
		prev = cur;
		memset(&cur, 0, sizeof cur);
		end_ms = t_ms + SAMPLE_MS;
	}
	if (r->duration_ms > end_ms)
		end_ms = r->duration_ms;
	names none = {0};
	if (rc == 0)
		rc = transition(events, &prev, &none, end_ms * 1000);
	names_free(&prev);
	if (rc != 0) {
		json_decref(events);
		return NULL;
	}
	return json_pack("{s:o,s:s,s:{s:s,s:I}}", "traceEvents", events, "displayTimeUnit", "ms",
			 "metadata", "report_id", r->report_id, "samples", (json_int_t)r->nsamples);
}

enum MHD_Result srv_h_report_trace_get(struct MHD_Connection *conn, srv_request *req)
{
	raw_tx t = {0};
	srv_rc found = srv_report_find(conn, req, &t.loc);
	if (found != SRV_OK)
		return srv_rc_mhd(found);
	int rc = st_run_tx("report_raw", raw_cb, &t);
	if (rc <= 0) {
		free(t.json);
		return rc < 0 ? srv_reply_store_error(conn, rc)
			      : srv_reply_error(conn, ERR_NOT_FOUND, "no such report");
	}
	ing_batch *b = NULL;
	ing_error err;
	ing_limits limits = ing_limits_default();
	/* Room for the samples turned into threads below. */
	limits.max_threads += limits.max_samples;
	rc = ing_parse_native(t.json, strlen(t.json), &limits, NULL, &b, &err);
	if (rc != 0 || !b->entries[0].report) {
		/* An Android report (its kind is not native's): made again
		 * from its Matrix element. */
		ing_batch_free(b);
		rc = ing_parse_matrix_stored(t.json, strlen(t.json), &b, &err);
	}
	free(t.json);
	if (rc != 0 || !b->entries[0].report) {
		ing_batch_free(b);
		return srv_reply_error(conn, ERR_INTERNAL, "stored report unreadable");
	}
	/* Symbolize the samples with the machinery of ingest by presenting
	 * them as extra threads: the same statuses and names as everywhere. */
	ing_report r = *b->entries[0].report;
	ing_thread *threads =
		ing_arena_calloc(b->arena, r.nthreads + r.nsamples + 1, sizeof *threads);
	enum MHD_Result ret;
	srv_symbol_set *set = NULL;
	const ing_report *list[1] = {&r};
	if (!threads) {
		ret = srv_reply_error(conn, ERR_INTERNAL, NULL);
		goto done;
	}
	memcpy(threads, r.threads, r.nthreads * sizeof *threads);
	for (size_t i = 0; i < r.nsamples; i++)
		threads[r.nthreads + i].stack = r.samples[i].stack;
	ing_report view = r;
	view.threads = threads;
	view.nthreads = r.nthreads + r.nsamples;
	rc = srv_symbol_set_load(srv_req_config(req)->data_dir, t.loc.app_id, list, 1, false, &set);
	if (rc < 0) {
		ret = srv_reply_store_error(conn, rc);
		goto done;
	}
	ing_image_symbols *images =
		ing_arena_calloc(b->arena, r.nimages ? r.nimages : 1, sizeof *images);
	ing_symbolized s;
	if (!images) {
		ret = srv_reply_error(conn, ERR_INTERNAL, NULL);
		goto done;
	}
	srv_symbol_set_images(set, &r, images);
	if (ing_symbolicate(&view, images, NULL, NULL, b->arena, &s) != 0) {
		ret = srv_reply_error(conn, ERR_INTERNAL, NULL);
		goto done;
	}
	json_t *threads_json = json_loadb(s.threads, s.threads_len, 0, NULL);
	json_t *stack_json = json_loadb(s.stack, s.stack_len, 0, NULL);
	json_t *trace = build_trace(&r, threads_json, stack_json);
	json_decref(threads_json);
	json_decref(stack_json);
	ing_symbolized_clear(&s);
	ret = trace ? srv_reply_json(conn, 200, trace) : srv_reply_error(conn, ERR_INTERNAL, NULL);
done:
	srv_symbol_set_free(set);
	ing_batch_free(b);
	return ret;
}
