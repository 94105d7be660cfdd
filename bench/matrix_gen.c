/*
 * matrix_gen.c — Matrix TraceCanary elements for the load generators; see
 * matrix_gen.h.
 */
#define _GNU_SOURCE
#include "matrix_gen.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DISPATCH_ID 1048574u

static const char *const details[] = {
	[MG_NORMAL] = "NORMAL",
	[MG_ANR] = "ANR",
	[MG_SIGNAL_ANR] = "SIGNAL_ANR",
	[MG_LAG] = "LAG",
	[MG_LAG_TOUCH] = "LAG_TOUCH",
	[MG_STARTUP] = "STARTUP",
	[MG_PRIORITY] = "PRIORITY_MODIFIED",
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Appends to BUF at *N, past CAP harmlessly (the length still grows). */
static void put(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(*n < cap ? buf + *n : NULL, *n < cap ? cap - *n : 0, fmt, ap);
	va_end(ap);
	*n += w > 0 ? (size_t)w : 0;
}

/* The mapping's name of method ID (bench/lib.sh bench_method_mapping). */
static void put_java_frame(char *buf, size_t cap, size_t *n, uint32_t id, int simple)
{
	if (simple)
		put(buf, cap, n, "|*\\t\\tat com.bench.feature%u.Screen%u:onStep%u(%u)\\n", id % 40,
		    id / 8, id, 20 + id % 300);
	else
		put(buf, cap, n, "com.bench.feature%u.Screen%u.onStep%u(Screen%u.java:%u)\\n",
		    id % 40, id / 8, id, id / 8, 20 + id % 300);
}

/* The "stack": the dispatch root, the heaviest path, then side branches
 * lighter than the path's node of their depth, in pre-order. */
static void put_stack(char *buf, size_t cap, size_t *n, const mg_element *e, uint64_t *rng)
{
	put(buf, cap, n, ",\"stack\":\"0,%u,1,%lld\\n", DISPATCH_ID, (long long)e->cost_ms);
	for (int d = 1; d <= e->nchain; d++)
		put(buf, cap, n, "%d,%u,1,%lld\\n", d, e->chain[d - 1],
		    (long long)(e->cost_ms - 15 * d));
	/* The last line's ms at each depth: a callee takes no longer than its
	 * caller. */
	long long at[MG_CHAIN_MAX + 1];
	for (int d = 0; d <= e->nchain; d++)
		at[d] = e->cost_ms - 15 * d;
	int depth = e->nchain;
	for (int line = 1 + e->nchain; line < MG_STACK_LINES; line++) {
		int top = depth + 1 < e->nchain ? depth + 1 : e->nchain;
		depth = 1 + (int)(rnd(rng) % (uint64_t)top);
		long long lighter = (e->cost_ms - 15 * depth) / 3;
		if (lighter > at[depth - 1])
			lighter = at[depth - 1];
		at[depth] = 1 + (long long)(rnd(rng) % (uint64_t)lighter);
		put(buf, cap, n, "%d,%u,%u,%lld\\n", depth, 1 + (uint32_t)(rnd(rng) % e->methods),
		    1 + (unsigned)(rnd(rng) % 3), at[depth]);
	}
	put(buf, cap, n, "\",\"stackKey\":\"%u|\"", e->chain[e->nchain - 1]);
}

/* A "threadStack", innermost first: the heaviest path's methods, then the
 * looper's frames; SIMPLE is Matrix's "|*\t\tat Class:method(line)" form. */
static void put_thread_stack(char *buf, size_t cap, size_t *n, const mg_element *e, int simple)
{
	put(buf, cap, n, ",\"threadStack\":\"%s", simple ? " \\n" : "");
	for (int d = e->nchain; d >= 1; d--)
		put_java_frame(buf, cap, n, e->chain[d - 1], simple);
	if (simple)
		put(buf, cap, n, "|*\\t\\tat android.os.Handler:dispatchMessage(106)\\n\"");
	else
		put(buf, cap, n,
		    "android.os.Handler.dispatchMessage(Handler.java:106)\\n"
		    "android.os.Looper.loop(Looper.java:223)\\n"
		    "android.app.ActivityThread.main(ActivityThread.java:7656)\\n\"");
}

static void put_evil_method(char *buf, size_t cap, size_t *n, const mg_element *e, uint64_t *rng)
{
	put(buf, cap, n, ",\"detail\":\"%s\"", details[e->kind]);
	if (e->kind == MG_NORMAL || e->kind == MG_ANR || e->kind == MG_STARTUP)
		put(buf, cap, n, ",\"cost\":%lld", (long long)e->cost_ms);
	if (e->kind != MG_STARTUP && e->kind != MG_PRIORITY)
		put(buf, cap, n, ",\"scene\":\"com.bench.feature%u.Screen%uActivity\"",
		    e->chain[0] % 40, e->chain[0] / 8);
	if (e->kind == MG_NORMAL || e->kind == MG_ANR || e->kind == MG_STARTUP)
		put_stack(buf, cap, n, e, rng);
	if (e->kind == MG_ANR)
		put_thread_stack(buf, cap, n, e, 1);
	else if (e->kind != MG_NORMAL && e->kind != MG_STARTUP)
		put_thread_stack(buf, cap, n, e, 0);
	if (e->kind == MG_STARTUP)
		put(buf, cap, n, ",\"subType\":1");
	if (e->kind == MG_ANR)
		put(buf, cap, n,
		    ",\"processPriority\":10,\"processNice\":-10,"
		    "\"isProcessForeground\":true,\"memory\":{\"dalvik_heap\":61440,"
		    "\"native_heap\":90112,\"vm_size\":15728640}");
	if (e->kind == MG_PRIORITY)
		put(buf, cap, n, ",\"processPriority\":16");
	put(buf, cap, n, ",\"tag\":\"Trace_EvilMethod\"");
}

static void put_measure(char *buf, size_t cap, size_t *n, const mg_element *e, uint64_t *rng)
{
	if (e->kind == MG_TRACE_STARTUP) {
		long long app = 300 + (long long)(rnd(rng) % 700);
		put(buf, cap, n,
		    ",\"application_create\":%lld,\"application_create_scene\":159,"
		    "\"first_activity_create\":%lld,\"startup_duration\":%lld,"
		    "\"is_warm_start_up\":false,\"tag\":\"Trace_StartUp\"",
		    app, app + 400, (long long)e->cost_ms);
		return;
	}
	unsigned best = 500 + (unsigned)(rnd(rng) % 500), normal = (unsigned)(rnd(rng) % 80);
	unsigned middle = (unsigned)(rnd(rng) % 20), high = (unsigned)(rnd(rng) % 5);
	put(buf, cap, n,
	    ",\"scene\":\"com.bench.feature%u.Screen%uActivity\",\"dropLevel\":{"
	    "\"DROPPED_FROZEN\":0,\"DROPPED_HIGH\":%u,\"DROPPED_MIDDLE\":%u,"
	    "\"DROPPED_NORMAL\":%u,\"DROPPED_BEST\":%u},\"dropSum\":{\"DROPPED_FROZEN\":0,"
	    "\"DROPPED_HIGH\":%u,\"DROPPED_MIDDLE\":%u,\"DROPPED_NORMAL\":%u,"
	    "\"DROPPED_BEST\":%u},\"fps\":%.1f,\"tag\":\"Trace_FPS\"",
	    e->chain[0] % 40, e->chain[0] / 8, high, middle, normal, best, high * 30, middle * 12,
	    normal * 4, best / 3, 50.0 + (double)(rnd(rng) % 100) / 10);
}

/* The content object, as Matrix's tracers and Plugin.onDetectIssue make it. */
static size_t put_content(char *buf, size_t cap, const mg_element *e, uint64_t *rng)
{
	size_t n = 0;
	put(buf, cap, &n,
	    "{\"machine\":\"HIGH\",\"cpu_app\":0,\"mem\":5923397632,"
	    "\"mem_free\":2718112");
	if (e->kind >= MG_TRACE_STARTUP)
		put_measure(buf, cap, &n, e, rng);
	else
		put_evil_method(buf, cap, &n, e, rng);
	put(buf, cap, &n, ",\"process\":\"com.bench.android\",\"time\":%lld}",
	    (long long)e->time_ms);
	return n;
}

size_t mg_put_element(char *buf, size_t cap, const mg_element *e, uint64_t *rng)
{
	if (!e->as_line)
		return put_content(buf, cap, e, rng);
	/* The Issue.toString() line: the content inside a JSON string. */
	char content[1 << 14];
	size_t len = put_content(content, sizeof content, e, rng), n = 0;
	if (len >= sizeof content)
		return cap;
	put(buf, cap, &n, "\"tag[%s]type[0];key[0];content[",
	    e->kind == MG_TRACE_STARTUP ? "Trace_StartUp"
	    : e->kind == MG_TRACE_FPS	? "Trace_FPS"
					: "Trace_EvilMethod");
	for (size_t i = 0; i < len; i++) {
		if (content[i] == '"' || content[i] == '\\')
			put(buf, cap, &n, "\\");
		put(buf, cap, &n, "%c", content[i]);
	}
	put(buf, cap, &n, "]\"");
	return n;
}

size_t mg_put_envelope_head(char *buf, size_t cap, const char *app_version, const char *build,
			    const char *user_id, const char *os_version, const char *device)
{
	size_t n = 0;
	put(buf, cap, &n,
	    "{\"app_version\":\"%s\",\"build\":\"%s\",\"user_id\":\"%s\",\"os_version\":\"%s\","
	    "\"device\":\"%s\",\"reports\":[",
	    app_version, build, user_id, os_version, device);
	return n;
}
