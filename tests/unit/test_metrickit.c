/* test_metrickit.c — MXDiagnosticPayload parsing on the real call-stack
 * trees from sentry-cocoa, nesting-direction detection, synthetic load
 * addresses, durations, payload forms and the idempotency key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

/* The module itself, to reach parse_duration. */
#include "ingest/metrickit.c"
#include "tests/unit/ingest_testutil.h"

#define SENTRY_UUID "9E8D8DE6-EEC1-3199-8720-9ED68EE3F967"
#define SWIFT_UUID "CA12CAFA-91BA-3E1C-BE9C-E34DB96FE7DF"

/* The tree file wrapped as one hang diagnostic. */
static char *wrap_tree(const char *rel, const char *meta)
{
	char *tree = tu_read_format(rel, NULL);
	char *body = tu_printf("{\"timeStampEnd\":\"2023-12-01 10:00:00\","
			       "\"hangDiagnostics\":[{\"version\":\"1.0.0\","
			       "\"callStackTree\":%s,\"diagnosticMetaData\":%s}]}",
			       tree, meta);
	free(tree);
	return body;
}

static ing_batch *parse_ok(const char *body, const char *user)
{
	ing_batch *b = NULL;
	ing_error err = {0};
	int rc = ing_parse_metrickit(body, strlen(body), NULL, user, &b, &err);
	if (rc)
		fprintf(stderr, "unexpected failure: %s\n", err.message);
	assert_int_equal(rc, 0);
	return b;
}

static const ing_image *image_of(const ing_report *r, const char *uuid)
{
	uint8_t u[16];
	assert_true(sym_uuid_parse(uuid, u));
	for (size_t i = 0; i < r->nimages; i++)
		if (!memcmp(r->images[i].uuid, u, 16))
			return &r->images[i];
	fail_msg("no image %s", uuid);
	return NULL;
}

/* Frame I of thread T lies in IMG at OFFSET. */
static void assert_frame(const ing_report *r, size_t t, size_t i,
			 const char *uuid, uint64_t offset)
{
	const ing_image *img = image_of(r, uuid);
	const ing_frame *f = &r->threads[t].stack.frames[i];
	assert_true(f->address >= img->load_address);
	assert_int_equal(f->address - img->load_address, offset);
	assert_true(f->address - img->load_address < img->size);
}

static const char *meta17 =
	"{\"appVersion\":\"1.2\",\"appBuildVersion\":\"45\","
	"\"osVersion\":\"iPhone OS 17.2 (21C62)\",\"deviceType\":\"iPhone14,2\","
	"\"platformArchitecture\":\"arm64e\",\"hangDuration\":\"9 sec\"}";

static void test_per_thread_tree(void **state)
{
	(void)state;
	char *body = wrap_tree("metrickit/per-thread.json", meta17);
	ing_batch *b = parse_ok(body, "u1");
	assert_true(b->is_batch);
	assert_int_equal(b->nentries, 1);
	const ing_report *r = b->entries[0].report;
	assert_non_null(r);
	assert_string_equal(r->source, "metrickit");
	assert_int_equal(r->kind, ING_KIND_STALL);
	assert_int_equal(r->duration_ms, 9000);
	assert_string_equal(r->app_version, "1.2");
	assert_string_equal(r->build, "45");
	assert_string_equal(r->os, "iOS");
	assert_string_equal(r->os_version, "17.2");
	assert_string_equal(r->os_build, "21C62");
	assert_string_equal(r->device, "iPhone14,2");
	assert_string_equal(r->user_id, "u1");
	assert_string_equal(r->timestamp, "2023-12-01T10:00:00Z");
	assert_int_equal(strlen(r->report_id), 32);
	assert_string_equal(r->report_id, b->entries[0].report_id);
	assert_int_equal(r->nthreads, 2);
	assert_true(r->threads[0].main); /* threadAttributed */
	assert_false(r->threads[1].main);
	/* Per-thread, no dyld at either end: leaf-first, so the top-level
	 * frame is the innermost. */
	assert_int_equal(r->threads[0].stack.nframes, 3);
	assert_frame(r, 0, 0, SENTRY_UUID, 414732);
	assert_frame(r, 0, 1, SWIFT_UUID, 46380);
	assert_frame(r, 0, 2, SWIFT_UUID, 46370);
	/* Loads come from the first frame (innermost first) with an address:
	 * 4312798220 - 414732, 4310988076 - 46380. */
	assert_int_equal(image_of(r, SENTRY_UUID)->load_address, 4312383488ULL);
	assert_int_equal(image_of(r, SWIFT_UUID)->load_address, 4310941696ULL);
	assert_int_equal(r->threads[0].stack.frames[0].address, 4312798220ULL);
	assert_int_equal(r->nimages, 2);
	assert_string_equal(image_of(r, SENTRY_UUID)->name, "Sentry");
	assert_int_equal(image_of(r, SENTRY_UUID)->arch, SYM_ARCH_ARM64E);
	ing_batch_free(b);
	free(body);
}

static void test_aggregated_tree_heaviest_path(void **state)
{
	(void)state;
	char *body = wrap_tree("metrickit/not-per-thread.json", "{}");
	ing_batch *b = parse_ok(body, NULL);
	const ing_report *r = b->entries[0].report;
	assert_non_null(r);
	assert_int_equal(r->nthreads, 1);
	assert_true(r->threads[0].main); /* no threadAttributed: the first */
	/* Heaviest path: root sc 7 → 46380 (6) → 46360 (3) → 46330 (a tie of
	 * three 1s: the first); aggregated = root-first, so reversed. */
	assert_int_equal(r->threads[0].stack.nframes, 4);
	assert_frame(r, 0, 0, SWIFT_UUID, 46330);
	assert_frame(r, 0, 1, SWIFT_UUID, 46360);
	assert_frame(r, 0, 2, SWIFT_UUID, 46380);
	assert_frame(r, 0, 3, SENTRY_UUID, 414732);
	/* Innermost frame's own address is kept (4310988066 - 46330). */
	assert_int_equal(r->threads[0].stack.frames[0].address, 4310988066ULL);
	assert_int_equal(r->nimages, 2); /* pthread/swiftCore off the path */
	assert_null(r->os);
	assert_int_equal(r->duration_ms, -1);
	ing_batch_free(b);
	free(body);
}

static void test_nil_package_and_unknown_fields(void **state)
{
	(void)state;
	char *body = wrap_tree("metrickit/per-thread-nil-package.json", "{}");
	ing_batch *b = parse_ok(body, NULL);
	const ing_report *r = b->entries[0].report;
	assert_non_null(r);
	assert_int_equal(r->nimages, 1);
	/* No binaryName: the UUID names the image. */
	assert_string_equal(r->images[0].name, SENTRY_UUID);
	assert_int_equal(r->images[0].load_address, 0);
	assert_int_equal(r->threads[0].stack.nframes, 1);
	assert_int_equal(r->threads[0].stack.frames[0].address, 0);
	ing_batch_free(b);
	free(body);
	body = wrap_tree("metrickit/tree-unknown-fields.json", "{}");
	b = parse_ok(body, NULL);
	r = b->entries[0].report;
	assert_non_null(r);
	assert_int_equal(r->threads[0].stack.nframes, 3);
	assert_frame(r, 0, 2, SWIFT_UUID, 46370);
	ing_batch_free(b);
	free(body);
}

/* A linear tree of NAMES (top-level first) with offsets 0x100 * (i + 1),
 * addresses 0x10000 * (i + 1) + offset, all in one per-name image. */
static char *chain(const char *const *names, size_t n, bool per_thread)
{
	tu_buf b = {0};
	tu_addf(&b, "{\"hangDiagnostics\":[{\"callStackTree\":{"
		    "\"callStackPerThread\":%s,\"callStacks\":[{"
		    "\"threadAttributed\":true,\"callStackRootFrames\":[",
		per_thread ? "true" : "false");
	for (size_t i = 0; i < n; i++)
		tu_addf(&b,
			"{\"binaryUUID\":\"00000000-0000-0000-0000-%012zu\","
			"\"binaryName\":\"%s\",\"offsetIntoBinaryTextSegment\":"
			"%zu,\"address\":%zu,\"sampleCount\":1,\"subFrames\":[",
			i + 1, names[i], 0x100 * (i + 1),
			0x10000 * (i + 1) + 0x100 * (i + 1));
	for (size_t i = 0; i < n; i++)
		tu_add(&b, "]}");
	tu_add(&b, "]}]}}]}");
	return b.s;
}

static void assert_order(const ing_report *r, const char *const *names,
			 size_t n, bool reversed)
{
	assert_int_equal(r->threads[0].stack.nframes, n);
	for (size_t i = 0; i < n; i++) {
		size_t d = reversed ? n - 1 - i : i;
		uint64_t a = r->threads[0].stack.frames[i].address;
		assert_int_equal(a, 0x10000 * (d + 1) + 0x100 * (d + 1));
		(void)names;
	}
}

static void test_nesting_direction_detection(void **state)
{
	(void)state;
	const char *root_top[] = {"dyld", "UIKitCore", "MyApp", "libsystem_kernel.dylib"};
	const char *root_deep[] = {"libsystem_kernel.dylib", "MyApp", "UIKitCore",
				   "libdyld.dylib"};
	const char *neither[] = {"MyApp", "UIKitCore", "CoreFoundation"};
	struct {
		const char *const *names;
		bool per_thread, reversed;
	} cases[] = {
		/* dyld at the top level: root-first even in a per-thread
		 * tree, so the deepest frame is innermost. */
		{root_top, true, true},
		{root_top, false, true},
		/* dyld at the deep end: leaf-first even when aggregated. */
		{root_deep, false, false},
		{root_deep, true, false},
		/* Neither end says: per-thread leaf-first, aggregated
		 * root-first. */
		{neither, true, false},
		{neither, false, true},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		size_t n = cases[k].names == neither ? 3 : 4;
		char *body = chain(cases[k].names, n, cases[k].per_thread);
		ing_batch *b = parse_ok(body, NULL);
		assert_non_null(b->entries[0].report);
		assert_order(b->entries[0].report, cases[k].names, n,
			     cases[k].reversed);
		ing_batch_free(b);
		free(body);
	}
}

static void test_missing_uuid_and_address(void **state)
{
	(void)state;
	const char *body =
		"{\"hangDiagnostics\":[{\"callStackTree\":{\"callStackPerThread\":"
		"true,\"callStacks\":[{\"callStackRootFrames\":["
		/* innermost: no UUID, an address: a frame in no image */
		"{\"address\":123456789,\"sampleCount\":1,\"subFrames\":["
		/* image A, no address anywhere: synthetic load */
		"{\"binaryUUID\":\"" SWIFT_UUID "\",\"binaryName\":\"A\","
		"\"offsetIntoBinaryTextSegment\":70000,\"sampleCount\":1,"
		"\"subFrames\":["
		/* image B with an address */
		"{\"binaryUUID\":\"" SENTRY_UUID "\",\"binaryName\":\"B\","
		"\"offsetIntoBinaryTextSegment\":16,\"address\":68719476752,"
		"\"sampleCount\":1,\"subFrames\":["
		/* image A again, deeper offset */
		"{\"binaryUUID\":\"" SWIFT_UUID "\","
		"\"offsetIntoBinaryTextSegment\":90000,\"sampleCount\":1,"
		"\"subFrames\":["
		/* no UUID, no address */
		"{\"binaryName\":\"C\",\"offsetIntoBinaryTextSegment\":5}"
		"]}]}]}]}]}]}}]}";
	ing_batch *b = parse_ok(body, NULL);
	const ing_report *r = b->entries[0].report;
	assert_non_null(r);
	assert_int_equal(r->threads[0].stack.nframes, 5);
	assert_int_equal(r->nimages, 2);
	const ing_frame *f = r->threads[0].stack.frames;
	assert_int_equal(f[0].address, 123456789);
	assert_int_equal(f[4].address, 0);
	const ing_image *a = image_of(r, SWIFT_UUID);
	const ing_image *bimg = image_of(r, SENTRY_UUID);
	assert_int_equal(bimg->load_address, 68719476736ULL);
	/* Synthetic: above every real address (B's frame at 2^36 + 16),
	 * 256 MiB aligned, covering A's largest offset. */
	assert_true(a->load_address > 68719476752ULL);
	assert_int_equal(a->load_address % (1u << 28), 0);
	assert_int_equal(a->size, 90001);
	assert_frame(r, 0, 1, SWIFT_UUID, 70000);
	assert_frame(r, 0, 3, SWIFT_UUID, 90000);
	assert_frame(r, 0, 2, SENTRY_UUID, 16);
	ing_batch_free(b);

	/* With no real address at all the synthetic region starts at 4 GiB. */
	const char *only = "{\"hangDiagnostics\":[{\"callStackTree\":{"
			   "\"callStacks\":[{\"callStackRootFrames\":[{"
			   "\"binaryUUID\":\"" SWIFT_UUID "\","
			   "\"offsetIntoBinaryTextSegment\":42}]}]}}]}";
	b = parse_ok(only, NULL);
	r = b->entries[0].report;
	assert_int_equal(r->images[0].load_address, 1ULL << 32);
	assert_int_equal(r->threads[0].stack.frames[0].address,
			 (1ULL << 32) + 42);
	assert_string_equal(r->images[0].name, SWIFT_UUID);
	ing_batch_free(b);
}

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int64_t ms;
	} ok[] = {
		{"\"9 sec\"", 9000},   {"\"1.5 s\"", 1500},
		{"\"850 ms\"", 850},   {"\"9.01 sec\"", 9010},
		{"\"2 min\"", 120000}, {"\" 3 seconds \"", 3000},
		{"\"7\"", 7000},       {"2.5", 2500},
		{"4", 4000},           {"\"0.25 SEC\"", 250},
		/* iOS 14 spells its units with a full stop */
		{"\"20 secs.\"", 20000}, {"\"20 sec.\"", 20000},
		{"\"20 secs\"", 20000},  {"\"20s\"", 20000},
		{"\"1 min.\"", 60000},   {"\"120 msec.\"", 120},
		{"\"1 hrs\"", 3600000},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		json_t *v = json_loads(ok[i].json, JSON_DECODE_ANY, NULL);
		int64_t ms = -7;
		assert_non_null(v);
		assert_null(parse_duration(v, &ms));
		assert_int_equal(ms, ok[i].ms);
		json_decref(v);
	}
	const char *bad[] = {"\"abc\"", "\"9 parsecs\"", "\"9 sec x\"",
			     "\"-1 s\"", "-3", "true", "\"\"",
			     "\"1e400 s\"", "\"9 sec..\"", "\"9 .\"",
			     "\"9 s.ec\""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *v = json_loads(bad[i], JSON_DECODE_ANY, NULL);
		int64_t ms;
		assert_non_null(v);
		assert_non_null(parse_duration(v, &ms));
		json_decref(v);
	}
	/* In a payload, a duration that cannot be read is unknown; the
	 * entry is kept with its stack. */
	char *body = wrap_tree("metrickit/per-thread.json",
			       "{\"hangDuration\":\"soon\"}");
	ing_batch *b = parse_ok(body, NULL);
	assert_non_null(b->entries[0].report);
	assert_int_equal(b->entries[0].report->duration_ms, -1);
	assert_true(b->entries[0].report->threads[0].stack.nframes > 0);
	ing_batch_free(b);
	free(body);
	/* iOS 14's "20 secs." is a 20 s stall. */
	body = wrap_tree("metrickit/per-thread.json",
			 "{\"hangDuration\":\"20 secs.\"}");
	b = parse_ok(body, NULL);
	assert_int_equal(b->entries[0].report->kind, ING_KIND_STALL);
	assert_int_equal(b->entries[0].report->duration_ms, 20000);
	ing_batch_free(b);
	free(body);
}

/* A duplicated key's last value counts, in the report and in the
 * idempotency key (the same entry without the first value keys alike). */
static void test_duplicate_keys_last_wins(void **state)
{
	(void)state;
	char *dup = wrap_tree("metrickit/per-thread.json",
			      "{\"appVersion\":\"1.0\",\"hangDuration\":\"1 sec\","
			      "\"appVersion\":\"2.0\",\"hangDuration\":\"4 sec\"}");
	char *last = wrap_tree("metrickit/per-thread.json",
			       "{\"appVersion\":\"2.0\",\"hangDuration\":\"4 sec\"}");
	ing_batch *b = parse_ok(dup, NULL), *b2 = parse_ok(last, NULL);
	assert_string_equal(b->entries[0].report->app_version, "2.0");
	assert_int_equal(b->entries[0].report->duration_ms, 4000);
	assert_string_equal(b->entries[0].report_id, b2->entries[0].report_id);
	ing_batch_free(b);
	ing_batch_free(b2);
	free(dup);
	free(last);
}

static void test_cpu_and_payload_forms(void **state)
{
	(void)state;
	char *tree = tu_read_format("metrickit/per-thread.json", NULL);
	char *one = tu_printf(
		"{\"cpuExceptionDiagnostics\":[{\"callStackTree\":%s,"
		"\"diagnosticMetaData\":{\"totalSampledTime\":\"20 sec\","
		"\"totalCPUTime\":\"19 sec\"}}],\"hangDiagnostics\":[{"
		"\"callStackTree\":%s}]}",
		tree, tree);
	ing_batch *b = parse_ok(one, NULL);
	assert_int_equal(b->nentries, 2);
	/* Entries come in hang, cpu, crash order. */
	assert_int_equal(b->entries[0].report->kind, ING_KIND_STALL);
	assert_int_equal(b->entries[1].report->kind, ING_KIND_CPU);
	assert_int_equal(b->entries[1].report->duration_ms, 20000);
	ing_batch_free(b);

	char *arr = tu_printf("[%s,%s]", one, one);
	b = parse_ok(arr, NULL);
	assert_int_equal(b->nentries, 4);
	/* Identical entries have the same key: a resend is no duplicate. */
	assert_string_equal(b->entries[0].report_id, b->entries[2].report_id);
	assert_string_not_equal(b->entries[0].report_id,
				b->entries[1].report_id);
	ing_batch_free(b);

	char *wrapped = tu_printf(
		"{\"payloads\":[%s,{\"crashDiagnostics\":[{\"callStackTree\":"
		"{\"callStacks\":[]}}]}]}",
		one);
	b = parse_ok(wrapped, NULL);
	assert_int_equal(b->nentries, 3);
	assert_null(b->entries[2].report);
	assert_string_equal(b->entries[2].error.message,
			    "payloads[1].crashDiagnostics[0].callStackTree."
			    "callStacks: must not be empty");
	ing_batch_free(b);

	/* A payload with only kinds we do not store is an empty batch. */
	b = parse_ok("{\"diskWriteExceptionDiagnostics\":[{}]}", NULL);
	assert_int_equal(b->nentries, 0);
	ing_batch_free(b);
	free(tree);
	free(one);
	free(arr);
	free(wrapped);
}

static void test_body_errors_and_limits(void **state)
{
	(void)state;
	ing_batch *b = (ing_batch *)1;
	ing_error err;
	const char *notp = "{\"foo\":1}";
	assert_int_equal(ing_parse_metrickit(notp, strlen(notp), NULL, NULL,
					     &b, &err),
			 -1);
	assert_null(b);
	assert_int_equal(err.code, ERR_BAD_FIELD);
	assert_non_null(strstr(err.message, "not an MXDiagnosticPayload"));
	const char *bad = "{\"hangDiagnostics\":{}}";
	assert_int_equal(ing_parse_metrickit(bad, strlen(bad), NULL, NULL, &b,
					     &err),
			 -1);
	assert_string_equal(err.message, "hangDiagnostics: expected an array");

	ing_limits l = ing_limits_default();
	l.max_reports = 2;
	const char *three = "{\"hangDiagnostics\":[{},{},{}]}";
	assert_int_equal(ing_parse_metrickit(three, strlen(three), &l, NULL,
					     &b, &err),
			 -1);
	assert_int_equal(err.code, ERR_TOO_MANY);

	/* A stack deeper than max_frames. */
	l = ing_limits_default();
	l.max_frames = 3;
	const char *names[] = {"a", "b", "c", "d"};
	char *deep = chain(names, 4, true);
	assert_int_equal(ing_parse_metrickit(deep, strlen(deep), &l, NULL, &b,
					     &err),
			 0);
	assert_null(b->entries[0].report);
	assert_int_equal(b->entries[0].error.code, ERR_TOO_MANY);
	assert_string_equal(b->entries[0].error.message,
			    "hangDiagnostics[0].callStackTree.callStacks[0]: "
			    "call stack deeper than 3 frames");
	ing_batch_free(b);
	l.max_frames = 4;
	assert_int_equal(ing_parse_metrickit(deep, strlen(deep), &l, NULL, &b,
					     &err),
			 0);
	assert_non_null(b->entries[0].report);
	ing_batch_free(b);
	free(deep);

	const char *badaddr =
		"{\"hangDiagnostics\":[{\"callStackTree\":{\"callStacks\":[{"
		"\"callStackRootFrames\":[{\"binaryUUID\":\"" SWIFT_UUID "\","
		"\"offsetIntoBinaryTextSegment\":1,\"address\":"
		"9007199254740993}]}]}}]}";
	b = parse_ok(badaddr, NULL);
	assert_null(b->entries[0].report);
	assert_string_equal(b->entries[0].error.message,
			    "hangDiagnostics[0].callStackTree.callStacks[0] "
			    "depth 0.address: JSON number above 2^53 (send a "
			    "hex string)");
	ing_batch_free(b);
}

static void test_deep_tree_within_json_depth(void **state)
{
	(void)state;
	/* 1000 frames nest ~2007 deep: accepted (jansson allows 2048). */
	enum { N = 1000 };
	tu_buf b = {0};
	tu_add(&b, "{\"hangDiagnostics\":[{\"callStackTree\":{"
		   "\"callStackPerThread\":false,\"callStacks\":[{"
		   "\"callStackRootFrames\":[");
	for (size_t i = 0; i < N; i++)
		/* A light sibling first, then the heavy branch. */
		tu_addf(&b,
			"{\"binaryUUID\":\"" SWIFT_UUID "\","
			"\"offsetIntoBinaryTextSegment\":%zu,\"sampleCount\":1},"
			"{\"binaryUUID\":\"" SWIFT_UUID "\","
			"\"offsetIntoBinaryTextSegment\":%zu,\"sampleCount\":%zu,"
			"\"subFrames\":[",
			1000000 + i, i, (size_t)(N - i) * 2);
	for (size_t i = 0; i < N; i++)
		tu_add(&b, "]}");
	tu_add(&b, "]}]}}]}");
	ing_batch *bt = parse_ok(b.s, NULL);
	const ing_report *r = bt->entries[0].report;
	assert_non_null(r);
	assert_int_equal(r->threads[0].stack.nframes, N);
	/* Root-first (aggregated): innermost is the deepest, offset N-1. */
	for (size_t i = 0; i < N; i++)
		assert_frame(r, 0, i, SWIFT_UUID, N - 1 - i);
	ing_batch_free(bt);
	free(b.s);
}

static void test_memory_limit_sweep(void **state)
{
	(void)state;
	char *tree = tu_read_format("metrickit/not-per-thread.json", NULL);
	tu_buf body = {0};
	tu_add(&body, "[");
	for (int i = 0; i < 20; i++) {
		char *p = tu_printf("%s{\"timeStampEnd\":\"2023-12-01 10:00:%02d\","
				    "\"hangDiagnostics\":[{\"callStackTree\":%s}]}",
				    i ? "," : "", i, tree);
		tu_add(&body, p);
		free(p);
	}
	tu_add(&body, "]");
	size_t ok = 0, failed = 0;
	for (size_t mem = 512; mem < 100 * 1024; mem += 512 + 16) {
		ing_limits l = ing_limits_default();
		l.max_memory = mem;
		ing_batch *b = NULL;
		ing_error err = {.code = ERR_NONE};
		if (ing_parse_metrickit(body.s, body.len, &l, NULL, &b, &err) ==
		    0) {
			assert_int_equal(b->nentries, 20);
			ing_batch_free(b);
			ok++;
		} else {
			assert_null(b);
			assert_int_equal(err.code, ERR_BODY_TOO_LARGE);
			failed++;
		}
	}
	assert_true(ok > 0 && failed > 0);
	free(body.s);
	free(tree);
}

static void test_entry_key(void **state)
{
	(void)state;
	json_t *e1 = json_loads("{\"b\":[1,2],\"a\":{\"y\":1,\"x\":\"s\"}}", 0,
				NULL);
	json_t *e2 = json_loads("{ \"a\" : {\"x\":\"s\", \"y\":1}, \"b\":[1, 2]}",
				0, NULL);
	char k1[33], k2[33], k3[33], k4[33], k5[33];
	assert_int_equal(ing_metrickit_entry_key(e1, "user", k1), 0);
	assert_int_equal(ing_metrickit_entry_key(e2, "user", k2), 0);
	assert_string_equal(k1, k2);
	assert_int_equal(ing_metrickit_entry_key(e1, "user2", k3), 0);
	assert_string_not_equal(k1, k3);
	assert_int_equal(ing_metrickit_entry_key(e1, NULL, k4), 0);
	assert_int_equal(ing_metrickit_entry_key(e1, "", k5), 0);
	assert_string_equal(k4, k5);
	assert_string_not_equal(k4, k1);
	/* Independently: XXH3_128 of the canonical text, NUL, user. */
	const char *canon = "{\"a\":{\"x\":\"s\",\"y\":1},\"b\":[1,2]}user";
	size_t clen = strlen(canon);
	char buf[64];
	memcpy(buf, canon, clen);
	memmove(buf + clen - 3, buf + clen - 4, 5);
	buf[clen - 4] = '\0'; /* "...]}" NUL "user" */
	XXH128_hash_t h = XXH3_128bits(buf, clen + 1);
	char expect[33];
	snprintf(expect, sizeof expect, "%016llx%016llx",
		 (unsigned long long)h.high64, (unsigned long long)h.low64);
	assert_string_equal(k1, expect);
	json_decref(e1);
	json_decref(e2);

	/* In a batch the report id is the key of the entry with the user
	 * passed in. */
	char *body = wrap_tree("metrickit/per-thread.json", "{}");
	ing_batch *b = parse_ok(body, "alice");
	json_t *root = json_loads(body, 0, NULL);
	char kk[33];
	ing_metrickit_entry_key(
		json_array_get(json_object_get(root, "hangDiagnostics"), 0),
		"alice", kk);
	assert_string_equal(b->entries[0].report_id, kk);
	ing_batch_free(b);
	b = parse_ok(body, "bob");
	assert_string_not_equal(b->entries[0].report_id, kk);
	ing_batch_free(b);
	json_decref(root);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_thread_tree),
		cmocka_unit_test(test_aggregated_tree_heaviest_path),
		cmocka_unit_test(test_nil_package_and_unknown_fields),
		cmocka_unit_test(test_nesting_direction_detection),
		cmocka_unit_test(test_missing_uuid_and_address),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_duplicate_keys_last_wins),
		cmocka_unit_test(test_cpu_and_payload_forms),
		cmocka_unit_test(test_body_errors_and_limits),
		cmocka_unit_test(test_deep_tree_within_json_depth),
		cmocka_unit_test(test_memory_limit_sweep),
		cmocka_unit_test(test_entry_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
