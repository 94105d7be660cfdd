/* test_native.c — native v1 parser: shapes, addresses, limits, batches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "ingest/parse.h"
#include "tests/unit/ingest_testutil.h"

static const char *spec_example =
	"{\"report_id\":\"uuid-from-client\",\"app_version\":\"8.0.1\","
	"\"build\":\"1234\",\"os\":\"iOS\",\"os_version\":\"17.2\","
	"\"device\":\"iPhone14,2\",\"user_id\":\"u-123\","
	"\"timestamp\":\"2026-11-20T10:00:00Z\",\"kind\":\"stall\","
	"\"duration_ms\":2400,"
	"\"images\":[{\"name\":\"MyApp\",\"uuid\":"
	"\"4C4C443B-5555-3144-A187-670DA53251E7\",\"arch\":\"arm64\","
	"\"load_address\":\"0x100000000\",\"size\":1234567}],"
	"\"threads\":[{\"name\":\"main\",\"main\":true,\"frames\":"
	"[\"0x1000040a0\",\"0x100004010\"]}],"
	"\"samples\":[{\"t_ms\":0,\"frames\":[\"0x1000040a0\"]},"
	"{\"t_ms\":50,\"frames\":[{\"address\":\"0x100004010\","
	"\"symbol\":\"-[A b]\"}]}]}";

/* Parses BODY expecting success; returns the batch. */
static ing_batch *parse_ok(const char *body, const char *user)
{
	ing_batch *b = NULL;
	ing_error err = {0};
	int rc = ing_parse_native(body, strlen(body), NULL, user, &b, &err);
	if (rc != 0)
		fprintf(stderr, "unexpected failure: %s\n", err.message);
	assert_int_equal(rc, 0);
	assert_non_null(b);
	return b;
}

/* Parses a single-report BODY expecting its one entry to be rejected with
 * CODE and a message starting with PREFIX. */
static void expect_reject(const char *body, const ing_limits *limits,
			  cm_err code, const char *prefix)
{
	ing_batch *b = NULL;
	ing_error err = {0};
	assert_int_equal(ing_parse_native(body, strlen(body), limits, NULL,
					  &b, &err),
			 0);
	assert_int_equal(b->nentries, 1);
	assert_null(b->entries[0].report);
	if (strncmp(b->entries[0].error.message, prefix, strlen(prefix)))
		fprintf(stderr, "message: %s\n", b->entries[0].error.message);
	assert_int_equal(b->entries[0].error.code, code);
	assert_memory_equal(b->entries[0].error.message, prefix,
			    strlen(prefix));
	ing_batch_free(b);
}

/* Whole-body failure with CODE and a message containing PART. */
static void expect_fail(const char *body, const ing_limits *limits,
			cm_err code, const char *part)
{
	ing_batch *b = (ing_batch *)1;
	ing_error err = {0};
	assert_int_equal(ing_parse_native(body, strlen(body), limits, NULL,
					  &b, &err),
			 -1);
	assert_null(b);
	if (!strstr(err.message, part))
		fprintf(stderr, "message: %s\n", err.message);
	assert_int_equal(err.code, code);
	assert_non_null(strstr(err.message, part));
}

static void test_spec_example(void **state)
{
	(void)state;
	ing_batch *b = parse_ok(spec_example, "header-user");
	assert_false(b->is_batch);
	assert_int_equal(b->nentries, 1);
	const ing_report *r = b->entries[0].report;
	assert_non_null(r);
	assert_string_equal(b->entries[0].report_id, "uuid-from-client");
	assert_string_equal(r->report_id, "uuid-from-client");
	assert_string_equal(r->app_version, "8.0.1");
	assert_string_equal(r->build, "1234");
	assert_string_equal(r->os, "iOS");
	assert_string_equal(r->os_version, "17.2");
	assert_string_equal(r->device, "iPhone14,2");
	assert_string_equal(r->user_id, "u-123"); /* body wins */
	assert_string_equal(r->timestamp, "2026-11-20T10:00:00Z");
	assert_string_equal(r->source, "native");
	assert_int_equal(r->kind, ING_KIND_STALL);
	assert_int_equal(r->duration_ms, 2400);
	assert_int_equal(r->nimages, 1);
	assert_string_equal(r->images[0].name, "MyApp");
	assert_true(r->images[0].has_uuid);
	assert_int_equal(r->images[0].uuid[0], 0x4c);
	assert_int_equal(r->images[0].uuid[15], 0xe7);
	assert_int_equal(r->images[0].arch, SYM_ARCH_ARM64);
	assert_int_equal(r->images[0].load_address, 0x100000000ULL);
	assert_int_equal(r->images[0].size, 1234567);
	assert_int_equal(r->nthreads, 1);
	assert_true(r->threads[0].main);
	assert_string_equal(r->threads[0].name, "main");
	assert_int_equal(r->threads[0].stack.nframes, 2);
	assert_int_equal(r->threads[0].stack.frames[0].address, 0x1000040a0ULL);
	assert_int_equal(r->threads[0].stack.frames[1].address, 0x100004010ULL);
	assert_null(r->threads[0].stack.frames[0].symbol_hint);
	assert_int_equal(r->nsamples, 2);
	assert_int_equal(r->samples[1].t_ms, 50);
	assert_string_equal(r->samples[1].stack.frames[0].symbol_hint,
			    "-[A b]");
	ing_batch_free(b);
}

static void test_minimal_and_header_user(void **state)
{
	(void)state;
	const char *body = "{\"report_id\":\"r1\",\"images\":[],"
			   "\"threads\":[{\"frames\":[]}]}";
	ing_batch *b = parse_ok(body, "hdr");
	const ing_report *r = b->entries[0].report;
	assert_string_equal(r->user_id, "hdr");
	assert_int_equal(r->kind, ING_KIND_STALL);
	assert_int_equal(r->duration_ms, -1);
	assert_null(r->app_version);
	assert_false(r->threads[0].main);
	ing_batch_free(b);
	b = parse_ok(body, NULL);
	assert_null(b->entries[0].report->user_id);
	ing_batch_free(b);
}

static void test_address_forms(void **state)
{
	(void)state;
	const char *body =
		"{\"report_id\":\"r\",\"images\":[],\"threads\":[{\"frames\":["
		"\"0xFFFFFFFFFFFFFFFF\",\"0X00000000000000000010\",\"12345\","
		"9007199254740992,{\"address\":4096,\"symbol\":\"\"},"
		"\"18446744073709551615\"]}]}";
	ing_batch *b = parse_ok(body, NULL);
	const ing_frame *f = b->entries[0].report->threads[0].stack.frames;
	assert_int_equal(f[0].address, UINT64_MAX);
	assert_int_equal(f[1].address, 16);
	assert_int_equal(f[2].address, 12345);
	assert_int_equal(f[3].address, 9007199254740992ULL); /* 2^53 */
	assert_int_equal(f[4].address, 4096);
	assert_null(f[4].symbol_hint); /* empty hint = none */
	assert_int_equal(f[5].address, UINT64_MAX);
	ing_batch_free(b);
}

static void test_address_rejections(void **state)
{
	(void)state;
	static const struct {
		const char *frame, *why;
	} cases[] = {
		{"9007199254740993", "threads[0].frames[1]: JSON number above 2^53"},
		/* Beyond 64 bits: still this frame's error, never rounded. */
		{"18446744073709551615",
		 "threads[0].frames[1]: JSON number above 2^53 (send a hex string)"},
		{"{\"address\":18446744069414586112}",
		 "threads[0].frames[1].address: JSON number above 2^53 (send a hex "
		 "string)"},
		{"-1", "threads[0].frames[1]: negative address"},
		{"1.5", "threads[0].frames[1]: not an integer address"},
		{"\"0x\"", "threads[0].frames[1]: not a hex address string"},
		{"\"0x12g\"", "threads[0].frames[1]: not a hex address string"},
		{"\"0x10000000000000000\"",
		 "threads[0].frames[1]: hex address wider than 64 bits"},
		{"\"18446744073709551616\"",
		 "threads[0].frames[1]: decimal address wider than 64 bits"},
		{"\"12a\"", "threads[0].frames[1]: not a hex address string"},
		{"\"\"", "threads[0].frames[1]: not a hex address string"},
		{"true", "threads[0].frames[1]: expected an address string"},
		{"{\"symbol\":\"x\"}", "threads[0].frames[1].address: missing"},
		{"{\"address\":\"zz\"}",
		 "threads[0].frames[1].address: not a hex address string"},
		{"{\"address\":1,\"symbol\":5}",
		 "threads[0].frames[1].symbol: expected a string"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *body = tu_printf("{\"report_id\":\"r\",\"images\":[],"
				       "\"threads\":[{\"frames\":[\"0x1\",%s]}]}",
				       cases[i].frame);
		expect_reject(body, NULL, ERR_BAD_FIELD, cases[i].why);
		free(body);
	}
}

/* A duplicated key's last value counts, as in JSON.parse; a number beyond
 * 64 bits in a field the report does not use costs nothing. */
static void test_duplicates_and_unused_big_numbers(void **state)
{
	(void)state;
	const char *body =
		"{\"report_id\":\"r\",\"os_version\":\"16.0\",\"duration_ms\":1,"
		"\"images\":[],\"extra\":{\"x\":18446744069414586112},"
		"\"threads\":[{\"frames\":[\"0x1\"]}],\"os_version\":\"17.2\","
		"\"duration_ms\":2500,\"threads\":[{\"frames\":[\"0x2\",\"0x3\"]}]}";
	ing_batch *b = parse_ok(body, NULL);
	const ing_report *r = b->entries[0].report;
	assert_string_equal(r->os_version, "17.2");
	assert_int_equal(r->duration_ms, 2500);
	assert_int_equal(r->nthreads, 1);
	assert_int_equal(r->threads[0].stack.nframes, 2);
	assert_int_equal(r->threads[0].stack.frames[0].address, 2);
	ing_batch_free(b);
	/* Used fields still refuse such numbers by name. */
	expect_reject("{\"report_id\":\"r\",\"duration_ms\":18446744069414586112,"
		      "\"images\":[],\"threads\":[{\"frames\":[]}]}",
		      NULL, ERR_BAD_FIELD, "duration_ms: expected milliseconds");
	expect_reject("{\"report_id\":\"r\",\"images\":[{\"name\":\"A\","
		      "\"load_address\":\"0x1000\",\"size\":99999999999999999999}],"
		      "\"threads\":[{\"frames\":[]}]}",
		      NULL, ERR_BAD_FIELD, "images[0].size: JSON number above 2^53");
}

static void test_field_rejections(void **state)
{
	(void)state;
	static const struct {
		const char *body, *why;
	} cases[] = {
		{"{\"images\":[],\"threads\":[{\"frames\":[]}]}",
		 "report_id: missing"},
		{"{\"report_id\":\"\",\"images\":[],\"threads\":[{\"frames\":[]}]}",
		 "report_id: must not be empty"},
		{"{\"report_id\":\"a b\",\"images\":[],\"threads\":[{\"frames\":[]}]}",
		 "report_id: only printable ASCII"},
		{"{\"report_id\":7,\"images\":[],\"threads\":[{\"frames\":[]}]}",
		 "report_id: expected a string"},
		{"{\"report_id\":\"r\",\"threads\":[{\"frames\":[]}]}",
		 "images: missing"},
		{"{\"report_id\":\"r\",\"images\":[]}", "threads: missing"},
		{"{\"report_id\":\"r\",\"images\":[],\"threads\":[]}",
		 "threads: must not be empty"},
		{"{\"report_id\":\"r\",\"images\":{},\"threads\":[{\"frames\":[]}]}",
		 "images: expected an array"},
		{"{\"report_id\":\"r\",\"kind\":\"freeze\",\"images\":[],"
		 "\"threads\":[{\"frames\":[]}]}",
		 "kind: expected stall, hang, cpu or crash"},
		{"{\"report_id\":\"r\",\"duration_ms\":-5,\"images\":[],"
		 "\"threads\":[{\"frames\":[]}]}",
		 "duration_ms: must not be negative"},
		{"{\"report_id\":\"r\",\"timestamp\":\"yesterday\",\"images\":[],"
		 "\"threads\":[{\"frames\":[]}]}",
		 "timestamp: not an RFC 3339 date-time"},
		{"{\"report_id\":\"r\",\"images\":[],\"threads\":[{\"main\":1,"
		 "\"frames\":[]}]}",
		 "threads[0].main: expected true or false"},
		{"{\"report_id\":\"r\",\"images\":[],\"threads\":[{}]}",
		 "threads[0].frames: missing"},
		{"{\"report_id\":\"r\",\"images\":[{\"name\":\"A\"}],"
		 "\"threads\":[{\"frames\":[]}]}",
		 "images[0].load_address: missing"},
		{"{\"report_id\":\"r\",\"images\":[{\"load_address\":\"0x1\"}],"
		 "\"threads\":[{\"frames\":[]}]}",
		 "images[0].name: missing"},
		{"{\"report_id\":\"r\",\"images\":[{\"name\":\"A\",\"load_address\":"
		 "\"0x1\",\"uuid\":\"not-a-uuid\"}],\"threads\":[{\"frames\":[]}]}",
		 "images[0].uuid: not a UUID"},
		{"{\"report_id\":\"r\",\"images\":[{\"name\":\"A\",\"load_address\":"
		 "\"0x1\",\"arch\":\"pdp11\"}],\"threads\":[{\"frames\":[]}]}",
		 "images[0].arch: unknown architecture"},
		{"{\"report_id\":\"r\",\"images\":[{\"name\":\"A\",\"load_address\":"
		 "\"0xffffffffffffff00\",\"size\":\"0x1000\"}],"
		 "\"threads\":[{\"frames\":[]}]}",
		 "images[0].size: load_address + size overflows"},
		{"{\"report_id\":\"r\",\"images\":[],\"threads\":[{\"frames\":[]}],"
		 "\"samples\":[{\"frames\":[]}]}",
		 "samples[0].t_ms: missing"},
		{"{\"report_id\":\"r\",\"images\":[],\"threads\":[{\"frames\":[]}],"
		 "\"samples\":[{\"t_ms\":1,\"frames\":[\"0xq\"]}]}",
		 "samples[0].frames[0]: not a hex address string"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		expect_reject(cases[i].body, NULL, ERR_BAD_FIELD, cases[i].why);
}

static void test_uuid_without_dashes_and_timestamps(void **state)
{
	(void)state;
	const char *body =
		"{\"report_id\":\"r\",\"timestamp\":\"2026-02-28T23:59:59.123+05:30\","
		"\"images\":[{\"name\":\"/x/Foo\",\"load_address\":\"0x10\","
		"\"uuid\":\"4c4c443b55553144a187670da53251e7\"}],"
		"\"threads\":[{\"frames\":[]}],\"kind\":\"hang\","
		"\"duration_ms\":12.9,\"os_build\":\"21C62\"}";
	ing_batch *b = parse_ok(body, NULL);
	const ing_report *r = b->entries[0].report;
	assert_true(r->images[0].has_uuid);
	assert_int_equal(r->images[0].uuid[1], 0x4c);
	assert_int_equal(r->images[0].size, 0);
	assert_int_equal(r->images[0].arch, SYM_ARCH_UNKNOWN);
	assert_int_equal(r->kind, ING_KIND_HANG);
	assert_int_equal(r->duration_ms, 12);
	assert_string_equal(r->os_build, "21C62");
	ing_batch_free(b);
	const char *bad_day =
		"{\"report_id\":\"r\",\"timestamp\":\"2026-02-29T00:00:00Z\","
		"\"images\":[],\"threads\":[{\"frames\":[]}]}";
	expect_reject(bad_day, NULL, ERR_BAD_FIELD, "timestamp:");
}

/* A report with NTHREADS threads of NFRAMES frames, NIMAGES images and a
 * build string of STRLEN bytes. */
static char *big_report(size_t nthreads, size_t nframes, size_t nimages,
			size_t strlen_)
{
	tu_buf b = {0};
	tu_add(&b, "{\"report_id\":\"big\",\"build\":\"");
	for (size_t i = 0; i < strlen_; i++)
		tu_add(&b, "d");
	tu_add(&b, "\",\"images\":[");
	for (size_t i = 0; i < nimages; i++)
		tu_addf(&b, "%s{\"name\":\"i%zu\",\"load_address\":%zu}",
			i ? "," : "", i, i * 4096);
	tu_add(&b, "],\"threads\":[");
	for (size_t t = 0; t < nthreads; t++) {
		tu_add(&b, t ? ",{\"frames\":[" : "{\"frames\":[");
		for (size_t f = 0; f < nframes; f++)
			tu_addf(&b, "%s%zu", f ? "," : "", f + 1);
		tu_add(&b, "]}");
	}
	tu_add(&b, "]}");
	return b.s;
}

static void test_limits_at_and_over(void **state)
{
	(void)state;
	char *s;
	ing_batch *b;
	s = big_report(64, 2048, 1024, 4096);
	b = parse_ok(s, NULL);
	assert_non_null(b->entries[0].report);
	assert_int_equal(b->entries[0].report->nthreads, 64);
	assert_int_equal(b->entries[0].report->threads[63].stack.nframes, 2048);
	assert_int_equal(b->entries[0].report->nimages, 1024);
	assert_int_equal(strlen(b->entries[0].report->build), 4096);
	ing_batch_free(b);
	free(s);

	s = big_report(65, 1, 0, 1);
	expect_reject(s, NULL, ERR_TOO_MANY,
		      "threads: 65 threads, more than the limit of 64");
	free(s);
	s = big_report(2, 2049, 0, 1);
	expect_reject(s, NULL, ERR_TOO_MANY,
		      "threads[0].frames: 2049 frames, more than the limit of "
		      "2048");
	free(s);
	s = big_report(1, 1, 1025, 1);
	expect_reject(s, NULL, ERR_TOO_MANY,
		      "images: 1025 images, more than the limit of 1024");
	free(s);
	s = big_report(1, 1, 0, 4097);
	expect_reject(s, NULL, ERR_BAD_FIELD, "build: longer than 4096 bytes");
	free(s);
}

/* {"report_id":"d",FIELD:"xxx…" (LEN bytes),"images":[],"threads":[…]} */
static char *report_with(const char *field, size_t len)
{
	tu_buf b = {0};
	tu_addf(&b, "{\"report_id\":\"d\",\"%s\":\"", field);
	for (size_t i = 0; i < len; i++)
		tu_add(&b, "x");
	tu_add(&b, "\",\"images\":[],\"threads\":[{\"frames\":[]}]}");
	return b.s;
}

/* The strings a report is counted under stop at ING_DIMENSION_MAX bytes
 * (the group counters' index could not hold more), from the body or the
 * X-Stallscope-User header alike. */
static void test_dimension_limits(void **state)
{
	(void)state;
	static const char *const fields[] = {"user_id", "app_version", "os_version", "device"};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		char *s = report_with(fields[i], ING_DIMENSION_MAX);
		ing_batch *b = parse_ok(s, NULL);
		assert_non_null(b->entries[0].report);
		ing_batch_free(b);
		free(s);
		char want[64];
		snprintf(want, sizeof want, "%s: longer than %d bytes", fields[i],
			 ING_DIMENSION_MAX);
		s = report_with(fields[i], ING_DIMENSION_MAX + 1);
		expect_reject(s, NULL, ERR_BAD_FIELD, want);
		free(s);
	}
	char user[ING_DIMENSION_MAX + 2];
	memset(user, 'u', sizeof user - 1);
	user[sizeof user - 1] = 0;
	const char *body = "{\"report_id\":\"h\",\"images\":[],"
			   "\"threads\":[{\"frames\":[]}]}";
	ing_batch *b = (ing_batch *)1;
	ing_error err = {0};
	assert_int_equal(ing_parse_native(body, strlen(body), NULL, user, &b, &err), -1);
	assert_null(b);
	assert_string_equal(err.message, "X-Stallscope-User: longer than 256 bytes");
	user[ING_DIMENSION_MAX] = 0;
	b = parse_ok(body, user);
	assert_int_equal(strlen(b->entries[0].report->user_id), ING_DIMENSION_MAX);
	ing_batch_free(b);
}

/* The header is raw bytes, unlike the JSON body jansson checks. */
static void test_header_user_must_be_utf8(void **state)
{
	(void)state;
	const char *body = "{\"report_id\":\"h\",\"images\":[],"
			   "\"threads\":[{\"frames\":[]}]}";
	ing_batch *b = (ing_batch *)1;
	ing_error err = {0};
	assert_int_equal(ing_parse_native(body, strlen(body), NULL, "caf\xe9", &b, &err), -1);
	assert_null(b);
	assert_int_equal(err.code, ERR_BAD_FIELD);
	assert_string_equal(err.message, "X-Stallscope-User: not valid UTF-8");
	b = parse_ok(body, "caf\xc3\xa9");
	assert_string_equal(b->entries[0].report->user_id, "caf\xc3\xa9");
	ing_batch_free(b);
}

static void test_samples_limit_and_configured_limits(void **state)
{
	(void)state;
	ing_limits l = ing_limits_default();
	l.max_samples = 2;
	l.max_frames = 3;
	const char *ok = "{\"report_id\":\"r\",\"images\":[],"
			 "\"threads\":[{\"frames\":[1,2,3]}],"
			 "\"samples\":[{\"t_ms\":0,\"frames\":[1]},"
			 "{\"t_ms\":1,\"frames\":[1,2,3]}]}";
	ing_batch *b = NULL;
	ing_error err;
	assert_int_equal(ing_parse_native(ok, strlen(ok), &l, NULL, &b, &err),
			 0);
	assert_non_null(b->entries[0].report);
	ing_batch_free(b);
	const char *three = "{\"report_id\":\"r\",\"images\":[],"
			    "\"threads\":[{\"frames\":[]}],"
			    "\"samples\":[{\"t_ms\":0,\"frames\":[]},"
			    "{\"t_ms\":1,\"frames\":[]},{\"t_ms\":2,\"frames\":[]}]}";
	expect_reject(three, &l, ERR_TOO_MANY,
		      "samples: 3 samples, more than the limit of 2");
	const char *deep = "{\"report_id\":\"r\",\"images\":[],"
			   "\"threads\":[{\"frames\":[]}],"
			   "\"samples\":[{\"t_ms\":0,\"frames\":[1,2,3,4]}]}";
	expect_reject(deep, &l, ERR_TOO_MANY,
		      "samples[0].frames: 4 frames, more than the limit of 3");
}

static void test_batch_good_and_bad(void **state)
{
	(void)state;
	tu_buf body = {0};
	tu_add(&body, "{\"reports\":[");
	tu_add(&body, "{\"report_id\":\"ok-1\",\"images\":[],\"threads\":"
		      "[{\"frames\":[\"0x1\"]}]},");
	tu_add(&body, "{\"report_id\":\"bad-2\",\"images\":[],\"threads\":"
		      "[{\"frames\":[\"0x1\",\"0x2\",\"0x3\",\"0x4\",\"0x5\","
		      "\"0x6\",\"0x7\",\"nope\"]}]},");
	tu_add(&body, "42,");
	tu_add(&body, "{\"report_id\":\"ok-4\",\"kind\":\"cpu\",\"images\":[],"
		      "\"threads\":[{\"frames\":[]}]}");
	tu_add(&body, "]}");
	ing_batch *b = parse_ok(body.s, "u");
	assert_true(b->is_batch);
	assert_int_equal(b->nentries, 4);
	assert_non_null(b->entries[0].report);
	assert_string_equal(b->entries[0].report_id, "ok-1");
	assert_int_equal(b->entries[0].error.code, ERR_NONE);
	assert_null(b->entries[1].report);
	assert_string_equal(b->entries[1].report_id, "bad-2");
	assert_int_equal(b->entries[1].error.code, ERR_BAD_FIELD);
	assert_string_equal(b->entries[1].error.message,
			    "reports[1].threads[0].frames[7]: not a hex "
			    "address string");
	assert_null(b->entries[2].report);
	assert_null(b->entries[2].report_id);
	assert_string_equal(b->entries[2].error.message,
			    "reports[2]: expected an object");
	assert_non_null(b->entries[3].report);
	assert_int_equal(b->entries[3].report->kind, ING_KIND_CPU);
	assert_string_equal(b->entries[3].report->user_id, "u");
	ing_batch_free(b);
	free(body.s);
}

static void test_batch_limits_and_body_errors(void **state)
{
	(void)state;
	for (size_t n = 1000; n <= 1001; n++) {
		tu_buf body = {0};
		tu_add(&body, "{\"reports\":[");
		for (size_t i = 0; i < n; i++)
			tu_addf(&body,
				"%s{\"report_id\":\"r%zu\",\"images\":[],"
				"\"threads\":[{\"frames\":[1]}]}",
				i ? "," : "", i);
		tu_add(&body, "]}");
		if (n == 1000) {
			ing_batch *b = parse_ok(body.s, NULL);
			assert_int_equal(b->nentries, 1000);
			assert_string_equal(b->entries[999].report_id, "r999");
			ing_batch_free(b);
		} else {
			expect_fail(body.s, NULL, ERR_TOO_MANY,
				    "reports: 1001 reports, more than the "
				    "limit of 1000");
		}
		free(body.s);
	}
	expect_fail("{\"reports\":[]}", NULL, ERR_BAD_FIELD, "empty batch");
	expect_fail("{\"reports\":{}}", NULL, ERR_BAD_FIELD,
		    "reports: expected an array");
	expect_fail("[1,2]", NULL, ERR_BAD_FIELD, "body: expected a report");
	expect_fail("{\"report_id\":", NULL, ERR_BAD_JSON, "body: ");
	ing_batch *b = (ing_batch *)1;
	ing_error err;
	assert_int_equal(ing_parse_native("", 0, NULL, NULL, &b, &err), -1);
	assert_int_equal(err.code, ERR_EMPTY_BODY);
}

static void test_depth_limit(void **state)
{
	(void)state;
	/* The report is 1 deep, threads 2, a thread 3, frames 4, a frame 5;
	 * an unknown field nests to exactly 64, then 65. */
	for (int depth = 64; depth <= 65; depth++) {
		tu_buf b = {0};
		tu_add(&b, "{\"report_id\":\"r\",\"images\":[],\"threads\":"
			   "[{\"frames\":[]}],\"extra\":");
		for (int i = 1; i < depth; i++)
			tu_add(&b, "[");
		for (int i = 1; i < depth; i++)
			tu_add(&b, "]");
		tu_add(&b, "}");
		if (depth == 64) {
			ing_batch *bt = parse_ok(b.s, NULL);
			assert_non_null(bt->entries[0].report);
			ing_batch_free(bt);
		} else {
			expect_fail(b.s, NULL, ERR_BAD_JSON,
				    "nesting deeper than 64");
		}
		free(b.s);
	}
}

static void test_memory_limit(void **state)
{
	(void)state;
	ing_limits l = ing_limits_default();
	l.max_memory = 64 * 1024;
	char *s = big_report(8, 2048, 0, 1); /* 8 × 2048 × 16 bytes */
	ing_batch *b = (ing_batch *)1;
	ing_error err;
	assert_int_equal(ing_parse_native(s, strlen(s), &l, NULL, &b, &err),
			 -1);
	assert_null(b);
	assert_int_equal(err.code, ERR_BODY_TOO_LARGE);
	free(s);
}

/* Whatever allocation runs out, the failure is the body's and says so. */
static void test_memory_limit_sweep(void **state)
{
	(void)state;
	tu_buf body = {0};
	tu_add(&body, "{\"reports\":[");
	for (int i = 0; i < 40; i++)
		tu_addf(&body,
			"%s{\"report_id\":\"r%d\",\"app_version\":\"1.0\","
			"\"images\":[{\"name\":\"A\",\"load_address\":1}],"
			"\"threads\":[{\"frames\":[1,2,3,4,5,6,7,8]}]}",
			i ? "," : "", i);
	tu_add(&body, "]}");
	size_t ok = 0, failed = 0;
	for (size_t mem = 1024; mem < 200 * 1024; mem += 1024 + 16) {
		ing_limits l = ing_limits_default();
		l.max_memory = mem;
		ing_batch *b = NULL;
		ing_error err = {.code = ERR_NONE};
		if (ing_parse_native(body.s, body.len, &l, NULL, &b, &err) == 0) {
			assert_int_equal(b->nentries, 40);
			for (size_t i = 0; i < 40; i++)
				assert_non_null(b->entries[i].report);
			ing_batch_free(b);
			ok++;
		} else {
			assert_null(b);
			assert_int_equal(err.code, ERR_BODY_TOO_LARGE);
			assert_non_null(strstr(err.message, "bytes"));
			failed++;
		}
	}
	assert_true(ok > 0 && failed > 0);
	free(body.s);
}

static void test_json_variant_does_not_keep_the_value(void **state)
{
	(void)state;
	json_t *root = json_loads(spec_example, 0, NULL);
	assert_non_null(root);
	ing_batch *b;
	ing_error err;
	assert_int_equal(ing_parse_native_json(root, NULL, NULL, &b, &err), 0);
	assert_int_equal(root->refcount, 1);
	json_decref(root); /* the batch must not point into it */
	assert_string_equal(b->entries[0].report->app_version, "8.0.1");
	assert_string_equal(b->entries[0].report->threads[0].name, "main");
	ing_batch_free(b);
	/* ing_parse dispatches by format. */
	assert_int_equal(ing_parse(ING_FORMAT_NATIVE, spec_example,
				   strlen(spec_example), NULL, NULL, &b, &err),
			 0);
	assert_string_equal(ing_format_name(ING_FORMAT_NATIVE), "native");
	ing_batch_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_example),
		cmocka_unit_test(test_minimal_and_header_user),
		cmocka_unit_test(test_address_forms),
		cmocka_unit_test(test_address_rejections),
		cmocka_unit_test(test_duplicates_and_unused_big_numbers),
		cmocka_unit_test(test_field_rejections),
		cmocka_unit_test(test_uuid_without_dashes_and_timestamps),
		cmocka_unit_test(test_limits_at_and_over),
		cmocka_unit_test(test_dimension_limits),
		cmocka_unit_test(test_header_user_must_be_utf8),
		cmocka_unit_test(test_samples_limit_and_configured_limits),
		cmocka_unit_test(test_batch_good_and_bad),
		cmocka_unit_test(test_batch_limits_and_body_errors),
		cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_memory_limit),
		cmocka_unit_test(test_memory_limit_sweep),
		cmocka_unit_test(test_json_variant_does_not_keep_the_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
