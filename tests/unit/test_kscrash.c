/* test_kscrash.c — KSCrash reports: the three real files, Matrix dump
 * types, newer hang sections, arrays, users, recrash reports, what the
 * recorder writes that strict JSON refuses, rejections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

/* The module itself, to reach classify and matrix_code_in. */
#include "ingest/kscrash.c"
#include "tests/unit/ingest_testutil.h"

static ing_batch *parse_ok(const char *body, size_t len, const char *user)
{
	ing_batch *b = NULL;
	ing_error err = {0};
	int rc = ing_parse_kscrash(body, len, NULL, user, &b, &err);
	if (rc)
		fprintf(stderr, "unexpected failure: %s\n", err.message);
	assert_int_equal(rc, 0);
	return b;
}

static void test_main_thread_deadlock(void **state)
{
	(void)state;
	size_t len;
	char *body = tu_read_format("kscrash/MainThreadDeadlock.json", &len);
	ing_batch *b = parse_ok(body, len, "hdr-user");
	assert_false(b->is_batch);
	assert_int_equal(b->nentries, 1);
	const ing_report *r = b->entries[0].report;
	assert_non_null(r);
	assert_string_equal(r->report_id,
			    "E7EF7206-10D6-42EF-A336-DA7774F4DD1A");
	assert_string_equal(r->source, "kscrash");
	/* KSCrash's deadlock watchdog: the main thread hung and the app was
	 * killed. */
	assert_int_equal(r->kind, ING_KIND_HANG);
	assert_string_equal(r->app_version, "1.0");
	assert_string_equal(r->build, "1.0");
	assert_string_equal(r->os, "iOS");
	assert_string_equal(r->os_version, "4.3.3");
	assert_string_equal(r->os_build, "8J2");
	assert_string_equal(r->device, "iPhone3,1");
	assert_string_equal(r->timestamp, "1970-01-17T18:49:14Z");
	/* The user section has no user id field: the header's. */
	assert_string_equal(r->user_id, "hdr-user");
	assert_int_equal(r->nimages, 123);
	const ing_image *app = &r->images[0];
	assert_string_equal(app->name,
			    "/var/mobile/Applications/B19FDF7E-768B-42D9-88E7-"
			    "80F757E22883/Crash-Tester.app/Crash-Tester");
	assert_true(app->has_uuid);
	assert_int_equal(app->uuid[0], 0x54);
	assert_int_equal(app->load_address, 974848);
	assert_int_equal(app->size, 282624);
	assert_int_equal(app->arch, SYM_ARCH_ARMV7); /* 12 / 9 */
	assert_int_equal(r->images[1].arch, SYM_ARCH_ARMV6); /* 12 / 6 */
	/* WinterBoard.dylib has no uuid. */
	size_t no_uuid = 0;
	for (size_t i = 0; i < r->nimages; i++)
		no_uuid += !r->images[i].has_uuid;
	assert_int_equal(no_uuid, 1);
	assert_int_equal(r->nthreads, 7);
	assert_true(r->threads[0].main);
	for (size_t i = 1; i < r->nthreads; i++)
		assert_false(r->threads[i].main);
	assert_string_equal(r->threads[0].name, "apple.main-thread");
	assert_string_equal(r->threads[3].name, "WebThread");
	assert_int_equal(r->threads[0].stack.nframes, 14);
	assert_int_equal(r->threads[0].stack.frames[0].address, 907590748);
	assert_string_equal(r->threads[0].stack.frames[0].symbol_hint,
			    "semaphore_wait_signal_trap");
	assert_string_equal(r->threads[0].stack.frames[2].symbol_hint,
			    "-[NSLock lock]");
	/* Thread 4 (the handler's) has no backtrace. */
	assert_int_equal(r->threads[4].stack.nframes, 0);
	assert_int_equal(r->duration_ms, -1);
	ing_batch_free(b);
	free(body);
}

static void test_crashes_and_array(void **state)
{
	(void)state;
	size_t l1, l2, l3;
	char *a = tu_read_format("kscrash/NSException.json", &l1);
	char *c = tu_read_format("kscrash/CrashInHandler.json", &l2);
	char *d = tu_read_format("kscrash/MainThreadDeadlock.json", &l3);
	ing_batch *b = parse_ok(a, l1, NULL);
	const ing_report *r = b->entries[0].report;
	assert_int_equal(r->kind, ING_KIND_CRASH);
	assert_string_equal(r->report_id,
			    "1DFC2552-8F7C-4D14-B0A8-5FE04E5AE35E");
	assert_int_equal(r->nthreads, 8);
	assert_int_equal(r->threads[0].stack.nframes, 23);
	assert_null(r->user_id);
	ing_batch_free(b);
	b = parse_ok(c, l2, NULL);
	r = b->entries[0].report;
	assert_int_equal(r->kind, ING_KIND_CRASH);
	assert_int_equal(r->threads[0].stack.nframes, 16);
	assert_string_equal(r->threads[0].stack.frames[0].symbol_hint,
			    "-[Crasher dereferenceBadPointer]");
	assert_string_equal(r->threads[7].name,
			    "KSCrash Exception Handler (Primary)");
	ing_batch_free(b);

	char *arr = tu_printf("[%s,%s,%s]", a, c, d);
	b = parse_ok(arr, strlen(arr), NULL);
	assert_true(b->is_batch);
	assert_int_equal(b->nentries, 3);
	assert_int_equal(b->entries[0].report->kind, ING_KIND_CRASH);
	assert_int_equal(b->entries[1].report->kind, ING_KIND_CRASH);
	assert_int_equal(b->entries[2].report->kind, ING_KIND_HANG);
	ing_batch_free(b);
	free(arr);
	free(a);
	free(c);
	free(d);
}

/* A small KSCrash report with ERROR as crash.error and USER as user. */
static char *mini(const char *id, const char *error, const char *user)
{
	return tu_printf(
		"{\"report\":{\"id\":\"%s\",\"timestamp\":1700000000123456},"
		"\"system\":{\"system_name\":\"iOS\"},"
		"\"binary_images\":[{\"name\":\"/a/App\",\"image_addr\":4096,"
		"\"image_size\":8192,\"cpu_type\":16777228,"
		"\"cpu_subtype\":-2147483646,\"uuid\":"
		"\"5425B875-D142-3832-BE8C-3B7DD8130813\"}],"
		"\"crash\":{\"error\":%s,\"threads\":["
		"{\"index\":1,\"backtrace\":{\"contents\":[{\"instruction_addr\":5000}]}},"
		"{\"index\":0,\"backtrace\":{\"contents\":[{\"instruction_addr\":"
		"\"0x1100\",\"symbol_name\":\"<redacted>\"}]}}]}%s%s}",
		id, error, user ? ",\"user\":" : "", user ? user : "");
}

static void test_matrix_dump_types(void **state)
{
	(void)state;
	static const struct {
		const char *error;
		ing_kind kind;
		int64_t dur;
	} cases[] = {
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"2001\"}}",
		 ING_KIND_STALL, -1},
		{"{\"type\":\"user\",\"user_reported\":{\"name\":"
		 "\"EDumpType 2002 background\"}}",
		 ING_KIND_STALL, -1},
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"2003\"}}",
		 ING_KIND_CPU, -1},
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"2007\"}}",
		 ING_KIND_STALL, -1},
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"2010\"}}",
		 ING_KIND_HANG, -1},
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"2011\"}}",
		 ING_KIND_CPU, -1},
		/* Not a Matrix code: 12001, 200, 3001. */
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"12001\"}}",
		 ING_KIND_CRASH, -1},
		{"{\"type\":\"user\",\"user_reported\":{\"name\":\"3001\"}}",
		 ING_KIND_CRASH, -1},
		/* Newer KSCrash: a recovered hang, a fatal one. */
		{"{\"type\":\"hang\",\"hang\":{\"hang_start_nanos\":1000000000,"
		 "\"hang_end_nanos\":3500000000}}",
		 ING_KIND_STALL, 2500},
		{"{\"type\":\"mach\",\"is_fatal\":true,\"hang\":{"
		 "\"hang_start_nanos\":654204315902125,"
		 "\"hang_end_nanos\":654207070528458},"
		 "\"exit_reason\":{\"code\":2343432205}}",
		 ING_KIND_HANG, 2754},
		{"{\"type\":\"mach\",\"is_fatal\":false,\"hang\":{"
		 "\"hang_start_nanos\":5,\"hang_end_nanos\":0}}",
		 ING_KIND_STALL, -1},
		{"{\"type\":\"signal\",\"exit_reason\":{\"code\":2343432205}}",
		 ING_KIND_HANG, -1},
		{"{\"type\":\"deadlock\"}", ING_KIND_HANG, -1},
		{"{\"type\":\"signal\"}", ING_KIND_CRASH, -1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *body = mini("R-1", cases[i].error, NULL);
		ing_batch *b = parse_ok(body, strlen(body), NULL);
		const ing_report *r = b->entries[0].report;
		assert_non_null(r);
		if (r->kind != cases[i].kind)
			fprintf(stderr, "case %zu\n", i);
		assert_int_equal(r->kind, cases[i].kind);
		assert_int_equal(r->duration_ms, cases[i].dur);
		ing_batch_free(b);
		free(body);
	}
	/* dump_type as a field beside the report. */
	char *body = mini("R-2", "{\"type\":\"user\"}", "{\"dump_type\":2010}");
	ing_batch *b = parse_ok(body, strlen(body), NULL);
	assert_int_equal(b->entries[0].report->kind, ING_KIND_HANG);
	ing_batch_free(b);
	free(body);
}

static void test_mini_fields(void **state)
{
	(void)state;
	char *body = mini("R-3", "{\"type\":\"signal\"}",
			  "{\"user_id\":\"body-user\"}");
	ing_batch *b = parse_ok(body, strlen(body), "hdr");
	const ing_report *r = b->entries[0].report;
	assert_string_equal(r->user_id, "body-user"); /* body wins */
	assert_string_equal(r->timestamp, "2023-11-14T22:13:20Z"); /* µs */
	assert_string_equal(r->os, "iOS");
	assert_int_equal(r->images[0].arch, SYM_ARCH_ARM64E);
	/* Index 0 is main even when listed second. */
	assert_false(r->threads[0].main);
	assert_true(r->threads[1].main);
	assert_int_equal(r->threads[1].stack.frames[0].address, 0x1100);
	assert_string_equal(r->threads[1].stack.frames[0].symbol_hint,
			    "<redacted>");
	ing_batch_free(b);
	free(body);
}

/*
 * A minimal recrash report as KSCrash's kscrashreport_writeRecrashReport
 * lays it out: the report being written when the handler crashed under
 * recrash_report, then report (type "minimal"), then crash with error and
 * crashed_thread only. Built from CrashInHandler.json, whose sections are
 * these two reports.
 */
static void test_minimal_recrash_report(void **state)
{
	(void)state;
	size_t len;
	char *text = tu_read_format("kscrash/CrashInHandler.json", &len);
	json_error_t jerr;
	json_t *full = json_loadb(text, len, 0, &jerr);
	assert_non_null(full);
	json_t *minimal = json_deep_copy(json_object_get(full, "recrash_report"));
	json_object_del(full, "recrash_report");
	json_t *doc = json_object();
	json_object_set(doc, "recrash_report", full);
	json_object_set(doc, "report", json_object_get(minimal, "report"));
	json_object_set(doc, "crash", json_object_get(minimal, "crash"));
	assert_null(json_object_get(json_object_get(doc, "crash"), "threads"));
	char *body = json_dumps(doc, 0);
	ing_batch *b = parse_ok(body, strlen(body), "hdr");
	const ing_report *r = b->entries[0].report;
	if (!r)
		fail_msg("%s", b->entries[0].error.message);
	const json_t *ct = json_object_get(json_object_get(minimal, "crash"),
					   "crashed_thread");
	const json_t *contents =
		json_object_get(json_object_get(ct, "backtrace"), "contents");
	assert_string_equal(r->report_id, json_string_value(json_object_get(
					   json_object_get(minimal, "report"), "id")));
	assert_int_equal(r->kind, ING_KIND_CRASH);
	assert_int_equal(r->nthreads, 1);
	assert_string_equal(r->threads[0].name, "KSCrash Exception Handler (Primary)");
	assert_int_equal(r->threads[0].stack.nframes, json_array_size(contents));
	for (size_t i = 0; i < json_array_size(contents); i++) {
		const json_t *f = json_array_get(contents, i);
		assert_int_equal(r->threads[0].stack.frames[i].address,
				 json_integer_value(json_object_get(f, "instruction_addr")));
		assert_string_equal(r->threads[0].stack.frames[i].symbol_hint,
				    json_string_value(json_object_get(f, "symbol_name")));
	}
	/* The interrupted report lends its images and system. */
	assert_int_equal(r->nimages, json_array_size(json_object_get(full, "binary_images")));
	const json_t *sys = json_object_get(full, "system");
	assert_string_equal(r->os_version,
			    json_string_value(json_object_get(sys, "system_version")));
	assert_string_equal(r->device, json_string_value(json_object_get(sys, "machine")));
	assert_string_equal(r->app_version, json_string_value(json_object_get(
						    sys, "CFBundleShortVersionString")));
	ing_batch_free(b);
	free(body);
	json_decref(doc);
	json_decref(full);
	json_decref(minimal);
	free(text);
}

/*
 * What KSCrash's recorder writes and its own reader takes: system.memory
 * twice (first {"size"}, later {"usable","free"}), uint64 register values
 * above 2^63, a comma before a closing bracket (its test resource
 * sigterm.json). Duplicates keep the last value.
 */
static void test_recorder_quirks(void **state)
{
	(void)state;
	const char *body =
		"{\"report\":{\"id\":\"Q-1\",\"timestamp\":1700000000000000},"
		"\"system\":{\"memory\":{\"size\":17179869184},"
		"\"system_version\":\"16.0\",\"machine\":\"iPhone14,2\","
		"\"memory\":{\"usable\":16010616832,\"free\":3427287040},"
		"\"system_version\":\"17.2\",},"
		"\"binary_images\":[{\"name\":\"App\",\"image_addr\":4096,"
		"\"image_size\":8192,},],"
		"\"crash\":{\"error\":{\"type\":\"signal\",\"address\":0,},"
		"\"threads\":[{\"index\":0,\"registers\":{\"basic\":{\"x0\":"
		"18446744073709551615,\"pc\":4196}},\"backtrace\":{\"contents\":"
		"[{\"instruction_addr\":4196},{\"instruction_addr\":4100},]}},]}}";
	ing_batch *b = parse_ok(body, strlen(body), NULL);
	const ing_report *r = b->entries[0].report;
	if (!r)
		fail_msg("%s", b->entries[0].error.message);
	assert_string_equal(r->os_version, "17.2");
	assert_string_equal(r->device, "iPhone14,2");
	assert_int_equal(r->nimages, 1);
	assert_int_equal(r->images[0].size, 8192);
	assert_int_equal(r->threads[0].stack.nframes, 2);
	assert_int_equal(r->threads[0].stack.frames[0].address, 4196);
	assert_int_equal(r->threads[0].stack.frames[1].address, 4100);
	ing_batch_free(b);
	/* A report cut off mid-write stays refused: KSCrash's own store
	 * drops it too. */
	ing_error err;
	b = (ing_batch *)1;
	assert_int_equal(ing_parse_kscrash(body, strlen(body) - 40, NULL, NULL,
					   &b, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_JSON);
}

static void test_rejections(void **state)
{
	(void)state;
	static const struct {
		const char *body, *why;
	} cases[] = {
		{"{\"crash\":{\"threads\":[{}]}}", "report: missing"},
		{"{\"report\":{},\"crash\":{\"threads\":[{}]}}", "report.id: missing"},
		{"{\"report\":{\"id\":\"x\"}}", "crash: missing"},
		{"{\"report\":{\"id\":\"x\"},\"crash\":{}}", "crash.threads: missing"},
		{"{\"report\":{\"id\":\"x\"},\"crash\":{\"crashed_thread\":[]}}",
		 "crash.crashed_thread: expected an object"},
		{"{\"report\":{\"id\":\"x\"},\"crash\":{\"crashed_thread\":{"
		 "\"backtrace\":{\"contents\":[{}]}}}}",
		 "crash.crashed_thread.backtrace.contents[0].instruction_addr: "
		 "missing"},
		{"{\"report\":{\"id\":\"x\"},\"recrash_report\":{\"binary_images\":"
		 "[{\"name\":\"a\"}]},\"crash\":{\"crashed_thread\":{}}}",
		 "recrash_report.binary_images[0].image_addr: missing"},
		{"{\"report\":{\"id\":\"x\"},\"crash\":{\"threads\":[]}}",
		 "crash.threads: must not be empty"},
		{"{\"report\":{\"id\":\"x\"},\"crash\":{\"threads\":[{\"backtrace\":"
		 "{\"contents\":[{\"instruction_addr\":\"0xZ\"}]}}]}}",
		 "crash.threads[0].backtrace.contents[0].instruction_addr: not a "
		 "hex address string"},
		{"{\"report\":{\"id\":\"x\"},\"crash\":{\"threads\":[{\"backtrace\":"
		 "{\"contents\":[{}]}}]}}",
		 "crash.threads[0].backtrace.contents[0].instruction_addr: missing"},
		{"{\"report\":{\"id\":\"x\"},\"binary_images\":[{\"name\":\"a\"}],"
		 "\"crash\":{\"threads\":[{}]}}",
		 "binary_images[0].image_addr: missing"},
		{"{\"report\":{\"id\":\"x\"},\"binary_images\":[{\"name\":\"a\","
		 "\"image_addr\":1,\"cpu_type\":\"arm\"}],\"crash\":{\"threads\":[{}]}}",
		 "binary_images[0].cpu_type: expected an integer"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ing_batch *b = parse_ok(cases[i].body, strlen(cases[i].body),
					NULL);
		assert_null(b->entries[0].report);
		if (strcmp(b->entries[0].error.message, cases[i].why))
			fprintf(stderr, "got: %s\n", b->entries[0].error.message);
		assert_string_equal(b->entries[0].error.message, cases[i].why);
		ing_batch_free(b);
	}
	/* In an array the path has the index and the id is kept. */
	const char *arr = "[{\"report\":{\"id\":\"good\"},\"crash\":{\"threads\":"
			  "[{}]}},{\"report\":{\"id\":\"bad\"},\"crash\":{}}]";
	ing_batch *b = parse_ok(arr, strlen(arr), NULL);
	assert_non_null(b->entries[0].report);
	assert_null(b->entries[1].report);
	assert_string_equal(b->entries[1].report_id, "bad");
	assert_string_equal(b->entries[1].error.message,
			    "body[1].crash.threads: missing");
	ing_batch_free(b);
	ing_error err;
	b = (ing_batch *)1;
	assert_int_equal(ing_parse_kscrash("[]", 2, NULL, NULL, &b, &err), -1);
	assert_int_equal(err.code, ERR_BAD_FIELD);
	assert_int_equal(ing_parse_kscrash("\"x\"", 3, NULL, NULL, &b, &err), -1);
	assert_int_equal(err.code, ERR_BAD_FIELD);
}

static void test_thread_and_frame_limits(void **state)
{
	(void)state;
	ing_limits l = ing_limits_default();
	l.max_threads = 1;
	l.max_frames = 1;
	const char *two = "{\"report\":{\"id\":\"x\"},\"crash\":{\"threads\":[{},{}]}}";
	ing_batch *b;
	ing_error err;
	assert_int_equal(ing_parse_kscrash(two, strlen(two), &l, NULL, &b, &err),
			 0);
	assert_int_equal(b->entries[0].error.code, ERR_TOO_MANY);
	assert_string_equal(b->entries[0].error.message,
			    "crash.threads: 2 threads, more than the limit of 1");
	ing_batch_free(b);
	const char *frames =
		"{\"report\":{\"id\":\"x\"},\"crash\":{\"threads\":[{\"backtrace\":"
		"{\"contents\":[{\"instruction_addr\":1},{\"instruction_addr\":2}]}}]}}";
	assert_int_equal(ing_parse_kscrash(frames, strlen(frames), &l, NULL, &b,
					   &err),
			 0);
	assert_int_equal(b->entries[0].error.code, ERR_TOO_MANY);
	assert_string_equal(b->entries[0].error.message,
			    "crash.threads[0].backtrace.contents: 2 frames, more "
			    "than the limit of 1");
	ing_batch_free(b);
}

static void test_memory_limit_sweep(void **state)
{
	(void)state;
	size_t len;
	char *one = tu_read_format("kscrash/MainThreadDeadlock.json", &len);
	char *arr = tu_printf("[%s,%s,%s]", one, one, one);
	size_t ok = 0, failed = 0;
	for (size_t mem = 4096; mem < 400 * 1024; mem += 4096 + 48) {
		ing_limits l = ing_limits_default();
		l.max_memory = mem;
		ing_batch *b = NULL;
		ing_error err = {.code = ERR_NONE};
		if (ing_parse_kscrash(arr, strlen(arr), &l, NULL, &b, &err) == 0) {
			assert_int_equal(b->nentries, 3);
			for (size_t i = 0; i < 3; i++)
				assert_non_null(b->entries[i].report);
			ing_batch_free(b);
			ok++;
		} else {
			assert_null(b);
			assert_int_equal(err.code, ERR_BODY_TOO_LARGE);
			failed++;
		}
	}
	assert_true(ok > 0 && failed > 0);
	free(arr);
	free(one);
}

static void test_matrix_code_scan(void **state)
{
	(void)state;
	assert_int_equal(matrix_code_in("2001"), 2001);
	assert_int_equal(matrix_code_in("type=2010;"), 2010);
	assert_int_equal(matrix_code_in("20100"), 0);
	assert_int_equal(matrix_code_in("x 1999 2000 2100"), 0);
	assert_int_equal(matrix_code_in("12 2099"), 2099);
	assert_int_equal(matrix_code_in(""), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_main_thread_deadlock),
		cmocka_unit_test(test_crashes_and_array),
		cmocka_unit_test(test_matrix_dump_types),
		cmocka_unit_test(test_mini_fields),
		cmocka_unit_test(test_minimal_recrash_report),
		cmocka_unit_test(test_recorder_quirks),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_thread_and_frame_limits),
		cmocka_unit_test(test_memory_limit_sweep),
		cmocka_unit_test(test_matrix_code_scan),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
