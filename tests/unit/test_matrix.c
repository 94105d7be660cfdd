/* test_matrix.c — Matrix TraceCanary bodies (SPEC §13): every
 * Trace_EvilMethod detail of Matrix 0.4 to 2.1 as content objects and as
 * Issue.toString() lines, the `stack` tree and its heaviest path, the
 * threadStack forms, startup and FPS measures, refusals beside accepted
 * elements, whole-body failures and the mapping UUID. Payload shapes are
 * FORMATS.md's (../shared/tracecanary/FORMATS.md), examples verbatim where
 * it quotes real ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "common/json.h"
#include "ingest/matrix.h"
#include "ingest/matrix_stack.h"
#include "tests/unit/ingest_testutil.h"

/* The four device keys every trace report starts with (FORMATS §2). */
#define DEVICE                                                                                     \
	"\"machine\":\"HIGH\",\"cpu_app\":5.742927561389997E-4,\"mem\":3942752256,"                \
	"\"mem_free\":1532568,"
/* The keys Plugin.onDetectIssue appends (FORMATS §1). */
#define TAIL(tag) "\"tag\":\"" tag "\",\"process\":\"sample.tencent.matrix\",\"time\":1700000000123"

#define EVIL(fields) "{" DEVICE fields "," TAIL("Trace_EvilMethod") "}"

/* Matrix 2.x NORMAL (the 27house.cn example's stack). */
static const char normal_2x[] =
	EVIL("\"detail\":\"NORMAL\",\"cost\":1006,\"scene\":\"sample.tencent.matrix.MainActivity\","
	     "\"stack\":\"0,1048574,1,1006\\n1,243,1,1000\\n\",\"stackKey\":\"243|\"");

/* A body with the envelope around ELEMENTS (JSON text, comma-separated). */
static char *envelope(const char *elements)
{
	return tu_printf("{\"app_version\":\"2.1.0\",\"build\":\"2100\",\"os_version\":\"13\","
			 "\"device\":\"Pixel 7\",\"reports\":[%s]}",
			 elements);
}

/* TEXT as a JSON string literal. */
static char *quote(const char *text)
{
	json_t *s = json_string(text);
	assert_non_null(s);
	char *q = json_dumps(s, JSON_ENCODE_ANY);
	json_decref(s);
	assert_non_null(q);
	return q;
}

static ing_batch *parse_ok(const char *body, const ing_limits *limits, const char *user)
{
	ing_batch *b = NULL;
	ing_error err = {0};
	int rc = ing_parse_matrix(body, strlen(body), limits, user, &b, &err);
	if (rc)
		fprintf(stderr, "unexpected failure: %s\n", err.message);
	assert_int_equal(rc, 0);
	assert_non_null(b);
	assert_true(b->is_batch);
	return b;
}

/* The one-element body of ELEMENT parsed, its report returned in *OUT. */
static ing_batch *parse_one(const char *element, const ing_report **out)
{
	char *body = envelope(element);
	ing_batch *b = parse_ok(body, NULL, "header-user");
	free(body);
	assert_int_equal(b->nentries, 1);
	if (!b->entries[0].report)
		fprintf(stderr, "refused: %s\n", b->entries[0].error.message);
	assert_int_equal(b->entries[0].error.code, ERR_NONE);
	*out = b->entries[0].report;
	return b;
}

/* Entry I of B is refused with CODE and a message containing NEEDLE. */
static void assert_refused(const ing_batch *b, size_t i, cm_err code, const char *needle)
{
	const ing_entry *e = &b->entries[i];
	assert_null(e->report);
	assert_null(e->measure);
	if (e->error.code != code || !strstr(e->error.message, needle))
		fail_msg("entry %zu: code %d, message \"%s\"; wanted %d and \"%s\"", i,
			 (int)e->error.code, e->error.message, (int)code, needle);
}

/* Frame K of thread T is method id ID with MS and COUNT. */
static void assert_method(const ing_report *r, size_t t, size_t k, uint64_t id, int64_t ms,
			  uint32_t count)
{
	const ing_stack *s = &r->threads[t].stack;
	assert_true(k < s->nframes);
	assert_non_null(s->java);
	assert_int_equal(s->frames[k].address, id);
	assert_null(s->java[k].name);
	assert_null(s->java[k].file);
	assert_int_equal(s->java[k].ms, ms);
	assert_int_equal(s->java[k].count, count);
}

/* Frame K of thread T is the Java frame NAME, FILE (or NULL), LINE. */
static void assert_java(const ing_report *r, size_t t, size_t k, const char *name, const char *file,
			int64_t line)
{
	const ing_stack *s = &r->threads[t].stack;
	assert_true(k < s->nframes);
	assert_int_equal(s->frames[k].address, 0);
	assert_string_equal(s->java[k].name, name);
	if (file)
		assert_string_equal(s->java[k].file, file);
	else
		assert_null(s->java[k].file);
	assert_int_equal(s->java[k].line, line);
	assert_int_equal(s->java[k].ms, -1);
	assert_int_equal(s->java[k].count, 0);
}

static void assert_mapping_image(const ing_report *r)
{
	uint8_t uuid[16];
	ing_matrix_mapping_uuid("2.1.0", "2100", uuid);
	assert_int_equal(r->nimages, 1);
	assert_string_equal(r->images[0].name, "matrix/2100/methodMapping.txt");
	assert_int_equal(r->images[0].arch, SYM_ARCH_JAVA);
	assert_true(r->images[0].has_uuid);
	assert_memory_equal(r->images[0].uuid, uuid, 16);
	assert_int_equal(r->images[0].load_address, 0);
	assert_int_equal(r->images[0].size, 1048575);
}

static void test_normal_2x(void **state)
{
	(void)state;
	const ing_report *r;
	ing_batch *b = parse_one(normal_2x, &r);
	assert_non_null(r);
	assert_int_equal(r->platform, ING_PLATFORM_ANDROID);
	assert_string_equal(r->source, "matrix");
	assert_string_equal(r->os, "android");
	assert_string_equal(r->app_version, "2.1.0");
	assert_string_equal(r->build, "2100");
	assert_string_equal(r->os_version, "13");
	assert_string_equal(r->device, "Pixel 7");
	assert_null(r->os_build);
	assert_string_equal(r->user_id, "header-user");
	assert_int_equal(r->kind, ING_KIND_SLOW_METHOD);
	assert_int_equal(r->duration_ms, 1006);
	/* 1700000000 s is 2023-11-14T22:13:20Z. */
	assert_string_equal(r->timestamp, "2023-11-14T22:13:20.123Z");
	assert_string_equal(r->client_key, "243|");
	assert_int_equal(r->nsamples, 0);
	/* The key is MetricKit's scheme over the content and the user. */
	json_t *content = json_loads(normal_2x, 0, NULL);
	char key[33];
	assert_int_equal(ing_metrickit_entry_key(content, "header-user", key), 0);
	assert_string_equal(r->report_id, key);
	assert_string_equal(b->entries[0].report_id, key);
	char *compact = cm_json_dump(content, NULL);
	assert_string_equal(r->matrix_content, compact);
	free(compact);
	json_decref(content);
	assert_mapping_image(r);
	assert_int_equal(r->nthreads, 1);
	assert_string_equal(r->threads[0].name, "main");
	assert_true(r->threads[0].main);
	assert_int_equal(r->threads[0].stack.nframes, 2);
	assert_method(r, 0, 0, 243, 1000, 1); /* innermost first */
	assert_method(r, 0, 1, 1048574, 1006, 1);
	ing_batch_free(b);
}

/* 0.4.x: subType, ENTER's viewInfo, a first depth other than 0, keys of
 * root ids each ending in "\n", FULL's "TypeFull"; 0.5: usage and the
 * multi-id key; the #148 example of one method called 30 times. */
static void test_old_versions(void **state)
{
	(void)state;
	static const char v04_148[] =
		EVIL("\"detail\":\"NORMAL\",\"subType\":-1,\"cost\":1611,"
		     "\"stack\":\"0,99,1,1611\\n1,101,30,1611\\n\",\"stackKey\":\"101\\n\"");
	static const char v04_enter[] = EVIL(
		"\"detail\":\"ENTER\",\"subType\":-1,\"cost\":900,\"viewInfo\":{\"viewDeep\":9,"
		"\"viewCount\":120,\"activity\":\"a.B\"},\"stack\":\"2,10,1,50\\n3,11,1,40\\n"
		"2,12,1,60\\n3,13,2,55\\n0,30,1,56\\n\",\"stackKey\":\"0,30,1,56\\n\"");
	static const char v04_full[] =
		EVIL("\"detail\":\"FULL\",\"subType\":-1,\"cost\":5000,"
		     "\"stack\":\"0,7,1,5000\\n\",\"stackKey\":\"TypeFull\"");
	static const char v05[] = EVIL("\"detail\":\"NORMAL\",\"cost\":800,\"usage\":\"66.33%\","
				       "\"stack\":\"0,1048574,1,800\\n1,5,2,790\\n\","
				       "\"stackKey\":\"5|1048574|\"");
	const ing_report *r;
	ing_batch *b = parse_one(v04_148, &r);
	assert_int_equal(r->kind, ING_KIND_SLOW_METHOD);
	assert_string_equal(r->client_key, "101\n");
	assert_int_equal(r->threads[0].stack.nframes, 2);
	assert_method(r, 0, 0, 101, 1611, 30);
	assert_method(r, 0, 1, 99, 1611, 1);
	ing_batch_free(b);

	/* Top level: 10 (50), 12 (60), 30 (56): 12 wins, then its child 13. */
	b = parse_one(v04_enter, &r);
	assert_int_equal(r->kind, ING_KIND_SLOW_METHOD);
	assert_int_equal(r->duration_ms, 900);
	assert_int_equal(r->threads[0].stack.nframes, 2);
	assert_method(r, 0, 0, 13, 55, 2);
	assert_method(r, 0, 1, 12, 60, 1);
	ing_batch_free(b);

	b = parse_one(v04_full, &r);
	assert_int_equal(r->kind, ING_KIND_SLOW_METHOD);
	assert_string_equal(r->client_key, "TypeFull");
	ing_batch_free(b);

	b = parse_one(v05, &r);
	assert_int_equal(r->kind, ING_KIND_SLOW_METHOD);
	assert_string_equal(r->client_key, "5|1048574|");
	assert_method(r, 0, 0, 5, 790, 2);
	assert_non_null(strstr(r->matrix_content, "\"usage\":\"66.33%\""));
	ing_batch_free(b);
}

static const char simple_stack[] = " \n|*\t\tat android.os.MessageQueue:nativePollOnce(-2)\n"
				   "|*\t\tat android.os.MessageQueue:next(335)\n"
				   "|*\t\tat android.os.Looper:loop(193)\n";

/* HEAD's ANR: stack for grouping, the SIMPLE threadStack kept beside. */
static void test_anr_with_both_stacks(void **state)
{
	(void)state;
	char *ts = quote(simple_stack);
	char *el = tu_printf(
		EVIL("\"detail\":\"ANR\",\"cost\":5000,\"stackKey\":\"243|\","
		     "\"scene\":\"a.Main\",\"stack\":\"0,1048574,1,5000\\n1,243,1,4990\\n\","
		     "\"threadStack\":%s,\"processPriority\":20,\"processNice\":0,"
		     "\"isProcessForeground\":true,\"memory\":{\"dalvik_heap\":1,"
		     "\"native_heap\":2,\"vm_size\":3}"),
		ts);
	const ing_report *r;
	ing_batch *b = parse_one(el, &r);
	assert_int_equal(r->kind, ING_KIND_ANR);
	assert_int_equal(r->duration_ms, 5000);
	assert_mapping_image(r);
	assert_int_equal(r->nthreads, 2);
	assert_method(r, 0, 0, 243, 4990, 1);
	assert_string_equal(r->threads[1].name, "threadStack");
	assert_false(r->threads[1].main);
	assert_int_equal(r->threads[1].stack.nframes, 3);
	assert_java(r, 1, 0, "android.os.MessageQueue.nativePollOnce", NULL, -2);
	assert_java(r, 1, 1, "android.os.MessageQueue.next", NULL, 335);
	assert_java(r, 1, 2, "android.os.Looper.loop", NULL, 193);
	ing_batch_free(b);
	free(el);
	free(ts);
}

static const char whole_stack[] = "android.os.MessageQueue.nativePollOnce(Native Method)\n"
				  "android.os.Looper.loop(Looper.java:193)\n"
				  "com.example.a.b(Unknown Source)\n"
				  "com.example.a.c(Unknown Source:4)\n"
				  "kotlinx.coroutines.Foo$bar$1.invoke(Foo.kt)\n"
				  "not a frame at all\n"
				  "android.app.ActivityThread.main(ActivityThread.java:7356)\n";

static void assert_whole(const ing_report *r, size_t t)
{
	assert_int_equal(r->threads[t].stack.nframes, 6);
	assert_java(r, t, 0, "android.os.MessageQueue.nativePollOnce", NULL, -2);
	assert_java(r, t, 1, "android.os.Looper.loop", "Looper.java", 193);
	assert_java(r, t, 2, "com.example.a.b", NULL, 0);
	assert_java(r, t, 3, "com.example.a.c", NULL, 4);
	assert_java(r, t, 4, "kotlinx.coroutines.Foo$bar$1.invoke", "Foo.kt", 0);
	assert_java(r, t, 5, "android.app.ActivityThread.main", "ActivityThread.java", 7356);
}

/* LAG: threadStack only (toString form): thread 0 holds it, no image,
 * no duration, no client key. */
static void test_lag_thread_stack_only(void **state)
{
	(void)state;
	char *ts = quote(whole_stack);
	char *el = tu_printf(EVIL("\"detail\":\"LAG\",\"scene\":\"a.Main\",\"threadStack\":%s,"
				  "\"isProcessForeground\":true"),
			     ts);
	const ing_report *r;
	ing_batch *b = parse_one(el, &r);
	assert_int_equal(r->kind, ING_KIND_LAG);
	assert_int_equal(r->duration_ms, -1);
	assert_null(r->client_key);
	assert_int_equal(r->nimages, 0);
	assert_int_equal(r->nthreads, 1);
	assert_true(r->threads[0].main);
	assert_string_equal(r->threads[0].name, "main");
	assert_whole(r, 0);
	ing_batch_free(b);
	free(el);
	free(ts);
}

/* Every detail of every version maps to its kind. */
static void test_every_detail(void **state)
{
	(void)state;
	/* Detail, then the kind's name, as SPEC §13 lists them. */
	static const char *const cases[][2] = {
		{"NORMAL", "slow_method"},
		{"ENTER", "slow_method"}, /* 0.4.x */
		{"FULL", "slow_method"},  /* 0.4.x */
		{"ANR", "anr"},
		{"SIGNAL_ANR", "anr"},
		{"SIGNAL_ANR_NATIVE_BACKTRACE", "anr"},
		{"LAG", "lag"},
		{"LAG_IDLE_HANDLER", "lag"},
		{"LAG_TOUCH", "lag"},
		{"STARTUP", "slow_startup"},
		{"PRIORITY_MODIFIED", "thread_policy"},
		{"TIMERSLACK_MODIFIED", "thread_policy"},
	};
	char *ts = quote("android.os.MessageQueue.nativePollOnce(Native Method)\n");
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *el = tu_printf(EVIL("\"detail\":\"%s\",\"subType\":1,\"threadStack\":%s,"
					  "\"processPriority\":-8,\"processTimerSlack\":50000"),
				     cases[i][0], ts);
		const ing_report *r;
		ing_batch *b = parse_one(el, &r);
		assert_string_equal(ing_kind_name(r->kind), cases[i][1]);
		assert_int_equal(r->threads[0].stack.nframes, 1);
		ing_batch_free(b);
		free(el);
	}
	free(ts);
}

/* Issue.toString() lines: 0.5's type[null], later type[0] with a key;
 * the same content as a line or an object is the same report. */
static void test_issue_lines(void **state)
{
	(void)state;
	char *line_null =
		tu_printf("tag[Trace_EvilMethod]type[null];key[null];content[%s]", normal_2x);
	/* A content without its own tag takes the line's. */
	const char untagged[] = "{\"detail\":\"STARTUP\",\"cost\":12000,\"subType\":1,"
				"\"stack\":\"0,3,1,12000\\n\",\"stackKey\":\"3|\"}";
	char *line_0 =
		tu_printf("tag[Trace_EvilMethod]type[0];key[1699999999];content[%s]\n", untagged);
	char *q1 = quote(line_null), *q2 = quote(line_0);
	char *els = tu_printf("%s,%s,%s", q1, normal_2x, q2);
	char *body = envelope(els);
	ing_batch *b = parse_ok(body, NULL, "u");
	assert_int_equal(b->nentries, 3);
	const ing_report *a = b->entries[0].report, *o = b->entries[1].report;
	const ing_report *c = b->entries[2].report;
	assert_non_null(a);
	assert_non_null(o);
	assert_non_null(c);
	assert_string_equal(a->report_id, o->report_id);
	assert_string_equal(a->matrix_content, o->matrix_content);
	assert_int_equal(a->kind, ING_KIND_SLOW_METHOD);
	assert_int_equal(c->kind, ING_KIND_SLOW_STARTUP);
	assert_int_equal(c->duration_ms, 12000);
	assert_null(c->timestamp); /* no "time" */
	assert_method(c, 0, 0, 3, 12000, 1);
	ing_batch_free(b);
	free(body);
	free(els);
	free(q1);
	free(q2);
	free(line_null);
	free(line_0);
}

/* ---- the stack tree ------------------------------------------------- */

static ing_mtree tree_of(ing_arena *a, const char *text)
{
	ing_mtree t;
	char why[160] = "";
	int rc = ing_mtree_parse(a, text, strlen(text), &t, why, sizeof why);
	if (rc)
		fprintf(stderr, "tree refused: %s\n", why);
	assert_int_equal(rc, 0);
	return t;
}

/* Tencent/matrix#436's stack (pre-order, the same method 27448 as five
 * siblings): the heaviest 27448 is the fifth (148 ms), then down. */
static void test_tree_preorder(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	ing_mtree t = tree_of(a, "0,1048574,1,741\n1,27448,1,78\n2,45864,1,47\n1,27448,1,96\n"
				 "2,45864,1,60\n1,27448,1,121\n2,45864,1,92\n1,27448,1,48\n"
				 "1,27448,1,148\n2,45864,1,130\n3,15291,1,54\n4,15299,1,54\n");
	assert_int_equal(t.n, 12);
	assert_int_equal(t.first_top, 0);
	assert_int_equal(t.nodes[2].parent, 1);
	assert_int_equal(t.nodes[3].parent, 0);
	assert_int_equal(t.nodes[11].parent, 10);
	size_t path[16];
	assert_int_equal(ing_mtree_heaviest(&t, path, 16), 5);
	size_t want[] = {0, 8, 9, 10, 11};
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(path[i], want[i]);
	/* Too deep for the room given. */
	assert_int_equal(ing_mtree_heaviest(&t, path, 4), -1);
	ing_arena_free(a);
}

/* Ties go to the first; a jump of depth attaches to the nearest
 * shallower line; "\r\n" and a missing final newline are fine;
 * durations negative or over an hour count as 0. */
static void test_tree_ties_jumps_garbage(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	ing_mtree t = tree_of(a, "0,1,1,10\r\n2,2,1,5\r\n2,3,1,5\r\n");
	size_t path[8];
	assert_int_equal(t.nodes[1].parent, 0);
	assert_int_equal(ing_mtree_heaviest(&t, path, 8), 2);
	assert_int_equal(path[1], 1);
	t = tree_of(a, "0,1048574,1,1006\n1,5,1,-3\n1,6,1,99999999999\n1,7,1,4\n"
		       "1,8,1,99999999999999999999999");
	assert_int_equal(t.nodes[1].ms, 0);
	assert_int_equal(t.nodes[2].ms, 0);
	assert_int_equal(t.nodes[4].ms, 0);
	assert_int_equal(ing_mtree_heaviest(&t, path, 8), 2);
	assert_int_equal(t.nodes[path[1]].method_id, 7);
	/* Empty: no node, an empty path. */
	t = tree_of(a, "");
	assert_int_equal(t.n, 0);
	assert_int_equal(t.first_top, -1);
	assert_int_equal(ing_mtree_heaviest(&t, path, 8), 0);
	ing_arena_free(a);
}

static void test_tree_refusals(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	ing_mtree t;
	char why[160];
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"0,1,1,5\n1,2,x,3\n", "line 2: expected depth,methodId,count,durMs"},
		{"0,1,1,5\n\n1,1048575,1,3\n", "line 3: method id at or above 1048575"},
		{"0,1,1\n", "line 1: expected"},
		{"0,1,1,5,6\n", "line 1: expected"},
		{" 0,1,1,5\n", "line 1: expected"},
		{"0,-1,1,5\n", "line 1: expected"},
		{"0,1,99999999999,5\n", "line 1: count too large"},
		{"99999999999,1,1,5\n", "line 1: depth too large"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(
			ing_mtree_parse(a, bad[i].text, strlen(bad[i].text), &t, why, sizeof why),
			ING_MSTACK_BAD);
		if (!strstr(why, bad[i].why))
			fail_msg("%s: \"%s\"", bad[i].text, why);
	}
	/* 1048574 (the dispatch root) is an id; 4096 lines pass, 4097 not. */
	tu_buf big = {0};
	for (size_t i = 0; i < ING_MSTACK_MAX_LINES; i++)
		tu_addf(&big, "%zu,1048574,1,5\n", i % 50);
	t = tree_of(a, big.s);
	assert_int_equal(t.n, ING_MSTACK_MAX_LINES);
	tu_add(&big, "0,1,1,1\n");
	assert_int_equal(ing_mtree_parse(a, big.s, big.len, &t, why, sizeof why), ING_MSTACK_BAD);
	assert_non_null(strstr(why, "4097 lines"));
	free(big.s);
	ing_arena_free(a);
}

/* Matrix trims to 30 lines: a 30-deep chain comes out whole, innermost
 * first, and the empty stack "" gives no image and no frame. */
static void test_thirty_lines_and_empty_stack(void **state)
{
	(void)state;
	tu_buf st = {0};
	for (size_t i = 0; i < 30; i++)
		tu_addf(&st, "%zu,%zu,1,%zu\\n", i, i + 100, 3000 - i);
	char *el = tu_printf(EVIL("\"detail\":\"NORMAL\",\"cost\":3000,\"stack\":\"%s\""), st.s);
	const ing_report *r;
	ing_batch *b = parse_one(el, &r);
	assert_int_equal(r->threads[0].stack.nframes, 30);
	for (size_t k = 0; k < 30; k++)
		assert_method(r, 0, k, 129 - k, (int64_t)(2971 + k), 1);
	ing_batch_free(b);
	free(el);
	free(st.s);

	b = parse_one(EVIL("\"detail\":\"NORMAL\",\"cost\":800,\"stack\":\"\",\"stackKey\":\"\""),
		      &r);
	assert_int_equal(r->nimages, 0);
	assert_null(r->client_key);
	assert_int_equal(r->nthreads, 1);
	assert_true(r->threads[0].main);
	assert_int_equal(r->threads[0].stack.nframes, 0);
	assert_null(r->threads[0].stack.java);
	ing_batch_free(b);
}

/* ---- threadStack ---------------------------------------------------- */

static void test_thread_stack_forms(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	ing_stack s;
	/* WHOLE without the prefix, Matrix's own unknown line -1. */
	const char whole[] = " \nat sample.Foo:bar(-1)\nat sample.Foo$1:run(12)\n"
			     "|*\t\tTraceStack:\nat :nothing(3)\nat sample.Foo:(3)\n";
	assert_int_equal(ing_thread_stack_parse(a, whole, strlen(whole), 64, 4096, &s), 0);
	assert_int_equal(s.nframes, 2);
	assert_string_equal(s.java[0].name, "sample.Foo.bar");
	assert_int_equal(s.java[0].line, 0);
	assert_string_equal(s.java[1].name, "sample.Foo$1.run");
	assert_int_equal(s.java[1].line, 12);
	/* At most MAX_FRAMES, the innermost kept. */
	assert_int_equal(ing_thread_stack_parse(a, simple_stack, strlen(simple_stack), 2, 4096, &s),
			 0);
	assert_int_equal(s.nframes, 2);
	assert_string_equal(s.java[1].name, "android.os.MessageQueue.next");
	/* A name longer than MAX_STRING is skipped, not cut. */
	assert_int_equal(ing_thread_stack_parse(a, simple_stack, strlen(simple_stack), 64, 26, &s),
			 0);
	assert_int_equal(s.nframes, 1);
	assert_string_equal(s.java[0].name, "android.os.Looper.loop");
	/* Nothing readable: no frames, no arrays. */
	assert_int_equal(ing_thread_stack_parse(a, " \n", 2, 64, 4096, &s), 0);
	assert_int_equal(s.nframes, 0);
	assert_null(s.frames);
	assert_null(s.java);
	ing_arena_free(a);

	/* Through a report: the toString form beside a stack. */
	char *ts = quote(whole_stack);
	char *el = tu_printf(EVIL("\"detail\":\"SIGNAL_ANR\",\"stack\":\"0,9,1,10\\n\","
				  "\"threadStack\":%s"),
			     ts);
	const ing_report *r;
	ing_batch *b = parse_one(el, &r);
	assert_int_equal(r->nthreads, 2);
	assert_method(r, 0, 0, 9, 10, 1);
	assert_whole(r, 1);
	ing_batch_free(b);
	free(el);
	free(ts);
}

/* ---- measures ------------------------------------------------------- */

static void test_startup_measure(void **state)
{
	(void)state;
	static const char cold[] =
		"{" DEVICE "\"application_create\":415,"
		"\"application_create_scene\":100,\"first_activity_create\":1203,"
		"\"startup_duration\":2000,\"is_warm_start_up\":false," TAIL("Trace_StartUp") "}";
	static const char warm[] = "{" DEVICE "\"application_create\":0,"
				   "\"application_create_scene\":159,\"first_activity_create\":0,"
				   "\"startup_duration\":350,\"is_warm_start_up\":true,"
				   "\"tag\":\"Trace_StartUp\"}";
	char *els = tu_printf("%s,%s", cold, warm);
	char *body = envelope(els);
	ing_batch *b = parse_ok(body, NULL, NULL);
	assert_int_equal(b->nentries, 2);
	const ing_entry *e = &b->entries[0];
	assert_null(e->report);
	assert_int_equal(e->error.code, ERR_NONE);
	const ing_measure *m = e->measure;
	assert_non_null(m);
	assert_int_equal(m->kind, ING_MEASURE_STARTUP);
	assert_int_equal(strlen(e->report_id), 32);
	assert_string_equal(m->key, e->report_id);
	assert_string_equal(m->app_version, "2.1.0");
	assert_string_equal(m->build, "2100");
	assert_string_equal(m->os_version, "13");
	assert_string_equal(m->device, "Pixel 7");
	assert_null(m->user_id);
	assert_int_equal(m->time_ms, 1700000000123);
	assert_false(m->warm);
	assert_int_equal(m->startup_ms, 2000);
	assert_int_equal(m->application_create_ms, 415);
	assert_int_equal(m->first_activity_create_ms, 1203);
	m = b->entries[1].measure;
	assert_non_null(m);
	assert_true(m->warm);
	assert_int_equal(m->startup_ms, 350);
	assert_int_equal(m->application_create_ms, 0);
	assert_int_equal(m->time_ms, -1);
	ing_batch_free(b);
	free(body);
	free(els);
}

static void test_fps_measure(void **state)
{
	(void)state;
	static const char fps[] =
		"{" DEVICE "\"scene\":\"sample.tencent.matrix.trace.TestFpsActivity\","
		"\"dropLevel\":{\"DROPPED_FROZEN\":0,\"DROPPED_HIGH\":1,\"DROPPED_MIDDLE\":3,"
		"\"DROPPED_NORMAL\":14,\"DROPPED_BEST\":451},\"dropSum\":{\"DROPPED_FROZEN\":0,"
		"\"DROPPED_HIGH\":25,\"DROPPED_MIDDLE\":40,\"DROPPED_NORMAL\":54,\"DROPPED_BEST\":"
		"24},"
		"\"fps\":55.22,\"TOTAL_DURATION\":16654321,\"DROP_COUNT\":3,\"REFRESH_RATE\":"
		"60," TAIL("Trace_FPS") "}";
	/* Before 2.1.0, integral fps without fraction; missing levels 0. */
	static const char old[] = "{\"dropLevel\":{\"DROPPED_BEST\":100},\"dropSum\":{},"
				  "\"fps\":60,\"tag\":\"Trace_FPS\"}";
	char *els = tu_printf("%s,%s", fps, old);
	char *body = envelope(els);
	ing_batch *b = parse_ok(body, NULL, "u9");
	const ing_measure *m = b->entries[0].measure;
	assert_non_null(m);
	assert_null(b->entries[0].report);
	assert_int_equal(m->kind, ING_MEASURE_FRAMES);
	assert_string_equal(m->user_id, "u9");
	assert_string_equal(m->scene, "sample.tencent.matrix.trace.TestFpsActivity");
	int64_t level[] = {451, 14, 3, 1, 0}, sum[] = {24, 54, 40, 25, 0};
	for (size_t i = 0; i < ING_DROP_LEVELS; i++) {
		assert_int_equal(m->drop_level[i], level[i]);
		assert_int_equal(m->drop_sum[i], sum[i]);
	}
	assert_true(m->fps > 55.21 && m->fps < 55.23);
	m = b->entries[1].measure;
	assert_non_null(m);
	assert_string_equal(m->scene, "");
	assert_int_equal(m->drop_level[ING_DROP_BEST], 100);
	assert_int_equal(m->drop_level[ING_DROP_FROZEN], 0);
	assert_int_equal(m->drop_sum[ING_DROP_BEST], 0);
	assert_true(m->fps == 60.0);
	ing_batch_free(b);
	free(body);
	free(els);
}

/* ---- refusals ------------------------------------------------------- */

static void test_refusals_beside_accepted(void **state)
{
	(void)state;
	static const char *const els[] = {
		normal_2x,
		"{\"tag\":\"Trace_Anr\",\"detail\":\"ANR\"}",
		EVIL("\"detail\":\"BOGUS\""),
		EVIL("\"detail\":\"NORMAL\",\"stack\":\"0,1,1,5\\n1,2,1\\n\""),
		EVIL("\"detail\":\"NORMAL\",\"stack\":\"0,1048575,1,5\\n\""),
		EVIL("\"detail\":\"NORMAL\",\"cost\":-1"),
		EVIL("\"detail\":\"NORMAL\",\"cost\":3600001"),
		"{\"startup_duration\":null,\"tag\":\"Trace_StartUp\"}",
		"{\"startup_duration\":-5,\"tag\":\"Trace_StartUp\"}",
		"{\"dropLevel\":{\"DROPPED_BEST\":-1},\"fps\":60,\"tag\":\"Trace_FPS\"}",
		"{\"fps\":-1,\"tag\":\"Trace_FPS\"}",
		"\"tag[Trace_EvilMethod]type[x];key[];content[{}]\"",
		"\"tag[Trace_EvilMethod]type[0];key[];content[[1]]\"",
		"42",
		"{\"detail\":\"NORMAL\"}",
		EVIL("\"stack\":\"0,1,1,5\\n\""),
		"{\"tag\":\"Trace_FPS\",\"fps\":60,\"dropSum\":[1]}",
		"{\"startup_duration\":100,\"tag\":\"Trace_StartUp\"}",
	};
	tu_buf all = {0};
	for (size_t i = 0; i < sizeof els / sizeof *els; i++) {
		tu_add(&all, i ? "," : "");
		tu_add(&all, els[i]);
	}
	char *body = envelope(all.s);
	ing_batch *b = parse_ok(body, NULL, NULL);
	assert_int_equal(b->nentries, sizeof els / sizeof *els);
	assert_non_null(b->entries[0].report);
	assert_refused(b, 1, ERR_UNSUPPORTED_REPORT, "reports[1].tag: \"Trace_Anr\"");
	assert_refused(b, 2, ERR_UNSUPPORTED_REPORT, "reports[2].detail: unknown detail \"BOGUS\"");
	assert_refused(b, 3, ERR_BAD_FIELD, "reports[3].stack line 2: expected");
	assert_refused(b, 4, ERR_BAD_FIELD, "reports[4].stack line 1: method id at or above");
	assert_refused(b, 5, ERR_BAD_FIELD, "reports[5].cost: negative");
	assert_refused(b, 6, ERR_BAD_FIELD, "reports[6].cost: more than an hour");
	assert_refused(b, 7, ERR_BAD_FIELD, "reports[7].startup_duration: missing");
	assert_refused(b, 8, ERR_BAD_FIELD, "reports[8].startup_duration: negative");
	assert_refused(b, 9, ERR_BAD_FIELD, "reports[9].dropLevel.DROPPED_BEST: must not be");
	assert_refused(b, 10, ERR_BAD_FIELD, "reports[10].fps: expected a number");
	assert_refused(b, 11, ERR_BAD_FIELD, "reports[11]: not an Issue.toString() line");
	assert_refused(b, 12, ERR_BAD_FIELD, "reports[12]: content[…]: expected a JSON object");
	assert_refused(b, 13, ERR_BAD_FIELD, "reports[13]: expected a content object");
	assert_refused(b, 14, ERR_BAD_FIELD, "reports[14].tag: missing");
	assert_refused(b, 15, ERR_BAD_FIELD, "reports[15].detail: missing");
	assert_refused(b, 16, ERR_BAD_FIELD, "reports[16].dropSum: expected an object");
	assert_non_null(b->entries[17].measure);
	/* A refused content still names its key. */
	assert_int_equal(strlen(b->entries[2].report_id), 32);
	assert_null(b->entries[13].report_id);
	ing_batch_free(b);
	free(body);
	free(all.s);
}

/* Failures of the body as a whole: no batch, the code and the field. */
static void test_body_failures(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		cm_err code;
		const char *msg;
	} cases[] = {
		{"not json", ERR_BAD_JSON, "body:"},
		{"[1]", ERR_BAD_FIELD, "body: expected"},
		{"{\"app_version\":\"1\",\"build\":\"2\"}", ERR_BAD_FIELD, "reports: missing"},
		{"{\"app_version\":\"1\",\"build\":\"2\",\"reports\":{}}", ERR_BAD_FIELD,
		 "reports: expected an array"},
		{"{\"app_version\":\"1\",\"build\":\"2\",\"reports\":[]}", ERR_BAD_FIELD,
		 "reports: empty batch"},
		{"{\"build\":\"2\",\"reports\":[{}]}", ERR_BAD_FIELD, "app_version: missing"},
		{"{\"app_version\":\"\",\"build\":\"2\",\"reports\":[{}]}", ERR_BAD_FIELD,
		 "app_version: must not be empty"},
		{"{\"app_version\":\"1\",\"reports\":[{}]}", ERR_BAD_FIELD, "build: missing"},
		{"{\"app_version\":\"1\",\"build\":2,\"reports\":[{}]}", ERR_BAD_FIELD,
		 "build: expected a string"},
		{"{\"app_version\":\"1\",\"build\":\"2\",\"user_id\":7,\"reports\":[{}]}",
		 ERR_BAD_FIELD, "user_id: expected a string"},
		{"{\"app_version\":\"1\",\"build\":\"2\",\"reports\":[{},{},{}]}", ERR_TOO_MANY,
		 "reports: 3 reports, more than the limit of 2"},
	};
	ing_limits lim = ing_limits_default();
	lim.max_reports = 2;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		ing_batch *b = (ing_batch *)1;
		ing_error err = {0};
		assert_int_equal(ing_parse_matrix(cases[i].body, strlen(cases[i].body), &lim, NULL,
						  &b, &err),
				 -1);
		assert_null(b);
		if (err.code != cases[i].code || !strstr(err.message, cases[i].msg))
			fail_msg("%s: %d \"%s\"", cases[i].body, (int)err.code, err.message);
	}
	/* Dimensions longer than max_dimension fail the body too. */
	char *body = tu_printf("{\"app_version\":\"%0300d\",\"build\":\"2\",\"reports\":[{}]}", 1);
	ing_batch *b = NULL;
	ing_error err = {0};
	assert_int_equal(ing_parse_matrix(body, strlen(body), NULL, NULL, &b, &err), -1);
	assert_non_null(strstr(err.message, "app_version: longer than 256 bytes"));
	free(body);
}

/* The body's user wins over the header's; the key follows the user. */
static void test_users_and_keys(void **state)
{
	(void)state;
	char *body =
		tu_printf("{\"app_version\":\"2.1.0\",\"build\":\"2100\",\"user_id\":\"body-u\","
			  "\"reports\":[%s]}",
			  normal_2x);
	ing_batch *b1 = parse_ok(body, NULL, "header-u");
	const ing_report *r1 = b1->entries[0].report;
	assert_string_equal(r1->user_id, "body-u");
	assert_null(r1->os_version);
	assert_null(r1->device);
	const ing_report *r2;
	ing_batch *b2 = parse_one(normal_2x, &r2);
	assert_string_equal(r2->user_id, "header-user");
	assert_string_not_equal(r1->report_id, r2->report_id);
	ing_batch_free(b1);
	ing_batch_free(b2);
	free(body);
	/* Through the dispatcher. */
	body = envelope(normal_2x);
	ing_batch *b = NULL;
	ing_error err = {0};
	assert_int_equal(ing_parse(ING_FORMAT_MATRIX, body, strlen(body), NULL, NULL, &b, &err), 0);
	assert_non_null(b->entries[0].report);
	assert_string_equal(ing_format_name(ING_FORMAT_MATRIX), "matrix");
	ing_batch_free(b);
	free(body);
}

static void test_mapping_uuid(void **state)
{
	(void)state;
	uint8_t a[16], a2[16], other_build[16], other_version[16], shifted[16];
	ing_matrix_mapping_uuid("2.1.0", "2100", a);
	ing_matrix_mapping_uuid("2.1.0", "2100", a2);
	ing_matrix_mapping_uuid("2.1.0", "2101", other_build);
	ing_matrix_mapping_uuid("2.1.1", "2100", other_version);
	/* The NUL keeps ("2.1.02", "100") apart from ("2.1.0", "2100"). */
	ing_matrix_mapping_uuid("2.1.02", "100", shifted);
	assert_memory_equal(a, a2, 16);
	assert_memory_not_equal(a, other_build, 16);
	assert_memory_not_equal(a, other_version, 16);
	assert_memory_not_equal(a, shifted, 16);
	assert_int_equal(a[6] >> 4, 8);
	assert_int_equal(a[8] & 0xc0, 0x80);
	assert_int_equal(other_build[6] >> 4, 8);
	/* What XXH3_128 gives today: a change of scheme strands stored
	 * mappings, so it must be deliberate. */
	char text[37];
	sym_uuid_format(a, text);
	assert_string_equal(text, "7E52AA10-468F-832B-B91C-77AA27745D73");
}

/* A time that is no epoch ms is only metadata: dropped, not refused. */
static void test_odd_time(void **state)
{
	(void)state;
	const ing_report *r;
	ing_batch *b = parse_one("{\"detail\":\"NORMAL\",\"time\":\"yesterday\","
				 "\"tag\":\"Trace_EvilMethod\"}",
				 &r);
	assert_null(r->timestamp);
	assert_int_equal(r->duration_ms, -1);
	assert_int_equal(r->nthreads, 1);
	assert_int_equal(r->threads[0].stack.nframes, 0);
	ing_batch_free(b);
	b = parse_one("{\"detail\":\"NORMAL\",\"time\":0,\"tag\":\"Trace_EvilMethod\"}", &r);
	assert_string_equal(r->timestamp, "1970-01-01T00:00:00.000Z");
	ing_batch_free(b);
}

/* Every memory bound either parses the body whole or fails it as too
 * large: never a crash, never a half-filled batch. */
static void test_memory_limit_sweep(void **state)
{
	(void)state;
	char *ts = quote(whole_stack);
	char *anr =
		tu_printf(EVIL("\"detail\":\"ANR\",\"cost\":5000,\"stack\":\"0,1,1,5000\\n1,2,3,"
			       "4000\\n\",\"threadStack\":%s"),
			  ts);
	char *line = tu_printf("tag[Trace_EvilMethod]type[0];key[1];content[%s]", normal_2x);
	char *q = quote(line);
	char *els = tu_printf("%s,%s,{\"startup_duration\":5,\"tag\":\"Trace_StartUp\"},"
			      "{\"fps\":5,\"tag\":\"Trace_FPS\"},{\"tag\":\"x\"}",
			      anr, q);
	char *body = envelope(els);
	ing_limits lim = ing_limits_default();
	size_t accepted = 0;
	for (lim.max_memory = 256; lim.max_memory <= 96 * 1024; lim.max_memory += 256) {
		ing_batch *b = NULL;
		ing_error err = {0};
		if (ing_parse_matrix(body, strlen(body), &lim, NULL, &b, &err) == 0) {
			assert_int_equal(b->nentries, 5);
			assert_non_null(b->entries[0].report);
			assert_non_null(b->entries[1].report);
			assert_non_null(b->entries[2].measure);
			assert_non_null(b->entries[3].measure);
			assert_null(b->entries[4].report);
			accepted++;
			ing_batch_free(b);
		} else {
			assert_null(b);
			assert_int_equal(err.code, ERR_BODY_TOO_LARGE);
		}
	}
	assert_true(accepted > 0);
	free(body);
	free(els);
	free(q);
	free(line);
	free(anr);
	free(ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_normal_2x),
		cmocka_unit_test(test_old_versions),
		cmocka_unit_test(test_anr_with_both_stacks),
		cmocka_unit_test(test_lag_thread_stack_only),
		cmocka_unit_test(test_every_detail),
		cmocka_unit_test(test_issue_lines),
		cmocka_unit_test(test_tree_preorder),
		cmocka_unit_test(test_tree_ties_jumps_garbage),
		cmocka_unit_test(test_tree_refusals),
		cmocka_unit_test(test_thirty_lines_and_empty_stack),
		cmocka_unit_test(test_thread_stack_forms),
		cmocka_unit_test(test_startup_measure),
		cmocka_unit_test(test_fps_measure),
		cmocka_unit_test(test_refusals_beside_accepted),
		cmocka_unit_test(test_body_failures),
		cmocka_unit_test(test_users_and_keys),
		cmocka_unit_test(test_mapping_uuid),
		cmocka_unit_test(test_odd_time),
		cmocka_unit_test(test_memory_limit_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
