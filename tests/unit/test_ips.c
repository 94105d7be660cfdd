/* test_ips.c — Apple .ips files: the golden cases under tests/golden/ips
 * (hand-written from Apple's documented format and the shapes of real
 * files: crash and watchdog-stackshot bodies, registers above 2^63, the
 * refused types with text bodies; each case's expected.json holds
 * addresses computed independently as base + offset) and the rejections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <string.h>

#include "ingest/parse.h"
#include "tests/unit/ingest_testutil.h"

#define GOLDEN "tests/golden/ips"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *hex(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

/* The parsed entry as the golden files spell it. */
static json_t *render(const ing_entry *e)
{
	if (!e->report)
		return json_pack("{s:o,s:{s:s,s:s}}", "report_id",
				 str_or_null(e->report_id), "error", "code",
				 cm_err_code(e->error.code), "message",
				 e->error.message);
	const ing_report *r = e->report;
	json_t *images = json_array(), *threads = json_array();
	for (size_t i = 0; i < r->nimages; i++) {
		const ing_image *im = &r->images[i];
		char u[37];
		if (im->has_uuid)
			sym_uuid_format(im->uuid, u);
		json_array_append_new(
			images,
			json_pack("{s:s,s:o,s:s,s:o,s:I}", "name", im->name,
				  "uuid", im->has_uuid ? json_string(u)
						       : json_null(),
				  "arch", sym_arch_name(im->arch),
				  "load_address", hex(im->load_address), "size",
				  (json_int_t)im->size));
	}
	for (size_t t = 0; t < r->nthreads; t++) {
		const ing_thread *th = &r->threads[t];
		json_t *frames = json_array();
		for (size_t i = 0; i < th->stack.nframes; i++)
			json_array_append_new(
				frames,
				json_pack("{s:o,s:o}", "address",
					  hex(th->stack.frames[i].address),
					  "symbol",
					  str_or_null(th->stack.frames[i]
							      .symbol_hint)));
		json_array_append_new(threads,
				      json_pack("{s:o,s:b,s:o}", "name",
						str_or_null(th->name), "main",
						th->main, "frames", frames));
	}
	return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:o,"
			 "s:o}",
			 "report_id", r->report_id, "kind",
			 ing_kind_name(r->kind), "app_version",
			 str_or_null(r->app_version), "build",
			 str_or_null(r->build), "os", str_or_null(r->os),
			 "os_version", str_or_null(r->os_version), "os_build",
			 str_or_null(r->os_build), "device",
			 str_or_null(r->device), "timestamp",
			 str_or_null(r->timestamp), "duration_ms",
			 (json_int_t)r->duration_ms, "user_id",
			 str_or_null(r->user_id), "images", images, "threads",
			 threads);
}

static void test_golden_cases(void **state)
{
	(void)state;
	DIR *d = opendir(GOLDEN);
	assert_non_null(d);
	size_t ncases = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *in_path = tu_printf(GOLDEN "/%s/input", de->d_name);
		char *ex_path = tu_printf(GOLDEN "/%s/expected.json", de->d_name);
		size_t len;
		char *input = tu_read_file(in_path, &len);
		char *exp_text = tu_read_file(ex_path, NULL);
		json_error_t jerr;
		json_t *expected = json_loads(exp_text, 0, &jerr);
		if (!expected)
			fail_msg("%s: %s", ex_path, jerr.text);
		ing_batch *b = NULL;
		ing_error err;
		int rc = ing_parse_ips(input, len, NULL, "tester", &b, &err);
		if (rc)
			fail_msg("%s: %s", in_path, err.message);
		assert_false(b->is_batch);
		assert_int_equal(b->nentries, 1);
		json_t *got = render(&b->entries[0]);
		if (!json_equal(got, expected)) {
			char *g = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));
			fprintf(stderr, "%s differs, got:\n%s\n", de->d_name, g);
			free(g);
			fail();
		}
		json_decref(got);
		json_decref(expected);
		ing_batch_free(b);
		free(input);
		free(exp_text);
		free(in_path);
		free(ex_path);
		ncases++;
	}
	closedir(d);
	assert_true(ncases >= 11);
}

static const char *rejected(const char *body, const ing_limits *l)
{
	static char msg[256];
	ing_batch *b = NULL;
	ing_error err;
	assert_int_equal(ing_parse_ips(body, strlen(body), l, NULL, &b, &err), 0);
	assert_null(b->entries[0].report);
	snprintf(msg, sizeof msg, "%s", b->entries[0].error.message);
	ing_batch_free(b);
	return msg;
}

static void test_rejections(void **state)
{
	(void)state;
	assert_string_equal(
		rejected("{\"bug_type\":\"288\",\"incident_id\":\"x\"}\n{}", NULL),
		"header.bug_type: 288 is a system-wide stackshot, not an app's "
		"report");
	assert_string_equal(
		rejected("{\"bug_type\":999,\"incident_id\":\"x\"}\nnot JSON", NULL),
		"header.bug_type: unsupported .ips type \"999\" (309 crash, 409 "
		"watchdog kill)");
	/* A refused type's rejection only names a usable id. */
	ing_batch *b = NULL;
	ing_error err;
	const char *badid = "{\"bug_type\":\"298\",\"incident_id\":\"a b\"}\n{}";
	assert_int_equal(ing_parse_ips(badid, strlen(badid), NULL, NULL, &b, &err), 0);
	assert_null(b->entries[0].report_id);
	assert_int_equal(b->entries[0].error.code, ERR_BAD_FIELD);
	ing_batch_free(b);
	const char *jetsam = "{\"bug_type\":\"298\",\"incident_id\":\"j\"}\n{}";
	assert_int_equal(ing_parse_ips(jetsam, strlen(jetsam), NULL, NULL, &b, &err), 0);
	assert_string_equal(b->entries[0].report_id, "j");
	assert_int_equal(b->entries[0].error.code, ERR_UNSUPPORTED_REPORT);
	ing_batch_free(b);
	/* Stackshot bodies (409). */
#define WD "{\"bug_type\":\"409\",\"incident_id\":\"x\",\"app_name\":\"A\"}\n"
	assert_string_equal(rejected(WD "{\"pid\":5,\"stackshot\":{}}", NULL),
			    "body.usedImages: missing (and no stackshot "
			    "processByPid)");
	assert_string_equal(
		rejected(WD "{\"pid\":5,\"stackshot\":{\"processByPid\":{\"6\":"
			 "{\"procname\":\"B\"}}}}", NULL),
		"body.stackshot.processByPid: no process with the body's pid or "
		"procName");
	/* pid -1: the header's app name finds the process. */
	assert_string_equal(
		rejected(WD "{\"pid\":-1,\"stackshot\":{\"processByPid\":{\"6\":"
			 "{\"procname\":\"A\",\"threadById\":{}}},"
			 "\"binaryImages\":[]}}", NULL),
		"body.stackshot.processByPid.6.threadById: must not be empty");
	assert_string_equal(
		rejected(WD "{\"pid\":6,\"stackshot\":{\"processByPid\":{\"6\":"
			 "{\"threadById\":{\"1\":{\"userFrames\":[[1,4]]}}}},"
			 "\"binaryImages\":[[\"11111111-2222-3333-4444-555555555555\",4096,"
			 "\"P\"]]}}", NULL),
		"body.stackshot.processByPid.6.threadById.1.userFrames[0][0]: 1 is "
		"not an index of binaryImages (1 images)");
	/* A used image whose base is beyond 2^53 is refused, never rounded. */
	assert_string_equal(
		rejected(WD "{\"pid\":6,\"stackshot\":{\"processByPid\":{\"6\":"
			 "{\"threadById\":{\"1\":{\"userFrames\":[[0,4]]}}}},"
			 "\"binaryImages\":[[\"11111111-2222-3333-4444-555555555555\","
			 "18446741874686296064,\"K\"]]}}", NULL),
		"body.stackshot.binaryImages[0][1]: JSON number above 2^53 (send a "
		"hex string)");
	assert_string_equal(
		rejected(WD "{\"pid\":6,\"stackshot\":{\"processByPid\":{\"6\":"
			 "{\"threadById\":{\"1\":{\"userFrames\":[[0,4]]}}}},"
			 "\"binaryImages\":[[\"nope\",4096]]}}", NULL),
		"body.stackshot.binaryImages[0][0]: not a UUID");
	ing_limits one = ing_limits_default();
	one.max_images = 1;
	assert_string_equal(
		rejected(WD "{\"pid\":6,\"stackshot\":{\"processByPid\":{\"6\":"
			 "{\"threadById\":{\"1\":{\"userFrames\":[[0,4],[1,4]]}}}},"
			 "\"binaryImages\":[[\"11111111-2222-3333-4444-555555555555\",4096],"
			 "[\"11111111-2222-3333-4444-555555555556\",8192],[\"x\"]]}}", &one),
		"body.stackshot.binaryImages: more than the limit of 1 images used");
#undef WD
	assert_string_equal(rejected("{\"incident_id\":\"x\"}\n{}", NULL),
			    "header.bug_type: missing");
	assert_string_equal(rejected("[1]\n{}", NULL),
			    "header: expected a JSON object on the first line");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\"}\n{\"usedImages\":[],"
			 "\"threads\":[{}]}",
			 NULL),
		"header.incident_id: missing");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"threads\":[{}]}",
			 NULL),
		"body.usedImages: missing");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"usedImages\":[{\"name\":\"a\"}],\"threads\":[{}]}",
			 NULL),
		"body.usedImages[0].base: missing");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"usedImages\":[{\"base\":1}],\"threads\":[{\"frames\":"
			 "[{\"imageIndex\":0}]}]}",
			 NULL),
		"body.threads[0].frames[0].imageOffset: missing");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"usedImages\":[],\"threads\":[]}",
			 NULL),
		"body.threads: must not be empty");
	ing_limits l = ing_limits_default();
	l.max_frames = 1;
	l.max_images = 1;
	l.max_threads = 1;
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"usedImages\":[{\"base\":1}],\"threads\":[{\"frames\":"
			 "[{\"imageIndex\":0,\"imageOffset\":1},{\"imageIndex\":0,"
			 "\"imageOffset\":2}]}]}",
			 &l),
		"body.threads[0].frames: 2 frames, more than the limit of 1");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"usedImages\":[{\"base\":1},{\"base\":2}],"
			 "\"threads\":[{}]}",
			 &l),
		"body.usedImages: 2 images, more than the limit of 1");
	assert_string_equal(
		rejected("{\"bug_type\":\"309\",\"incident_id\":\"x\"}\n"
			 "{\"usedImages\":[],\"threads\":[{},{}]}",
			 &l),
		"body.threads: 2 threads, more than the limit of 1");
}

static void test_whole_body_failures_and_crlf(void **state)
{
	(void)state;
	ing_batch *b = (ing_batch *)1;
	ing_error err;
	const char *nonl = "{\"bug_type\":\"309\"}";
	assert_int_equal(ing_parse_ips(nonl, strlen(nonl), NULL, NULL, &b, &err),
			 -1);
	assert_null(b);
	assert_int_equal(err.code, ERR_BAD_FIELD);
	const char *text = "{\"bug_type\":\"109\"}\nIncident Identifier: x\n";
	assert_int_equal(ing_parse_ips(text, strlen(text), NULL, NULL, &b, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_JSON);
	assert_memory_equal(err.message, "body: ", 6);
	assert_int_equal(ing_parse_ips("", 0, NULL, NULL, &b, &err), -1);
	assert_int_equal(err.code, ERR_EMPTY_BODY);
	const char *crlf = "{\"bug_type\":\"309\",\"incident_id\":\"c\"}\r\n"
			   "{\"incident\":\"ignored\",\"usedImages\":[],"
			   "\"threads\":[{\"queue\":\"com.apple.main-thread\"}]}";
	assert_int_equal(ing_parse_ips(crlf, strlen(crlf), NULL, NULL, &b, &err),
			 0);
	assert_non_null(b->entries[0].report);
	assert_string_equal(b->entries[0].report->report_id, "c");
	assert_true(b->entries[0].report->threads[0].main);
	ing_batch_free(b);
	/* The body's incident stands in for a missing incident_id. */
	const char *inc = "{\"bug_type\":\"409\"}\n{\"incident\":\"from-body\","
			  "\"usedImages\":[],\"threads\":[{}]}";
	assert_int_equal(ing_parse(ING_FORMAT_IPS, inc, strlen(inc), NULL, NULL,
				   &b, &err),
			 0);
	assert_string_equal(b->entries[0].report->report_id, "from-body");
	ing_batch_free(b);
}

/* The duration of a 309 with TERMINATION (a JSON object) as its body's. */
static int64_t duration_of(const char *termination)
{
	char *body = tu_printf("{\"bug_type\":\"309\",\"incident_id\":\"d\"}\n"
			       "{\"termination\":%s,\"usedImages\":[],\"threads\":[{}]}",
			       termination);
	ing_batch *b = NULL;
	ing_error err;
	assert_int_equal(ing_parse_ips(body, strlen(body), NULL, NULL, &b, &err), 0);
	assert_non_null(b->entries[0].report);
	int64_t ms = b->entries[0].report->duration_ms;
	ing_batch_free(b);
	free(body);
	return ms;
}

/* A watchdog kill's duration is the allowance its reason names (the JSON
 * format has no duration field); anything else leaves it unknown. */
static void test_hang_duration_from_the_watchdog_reason(void **state)
{
	(void)state;
#define KILL(REASONS) "{\"code\":2343432205,\"reasons\":" REASONS "}"
#define ALLOWANCE(S)                                                                               \
	"\"scene-update watchdog transgression: app exhausted real (wall clock)"                   \
	" time allowance of " S "\""
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("10.00 seconds") "]")), 10000);
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("19.97 seconds") "]")), 19970);
	/* Past the millisecond truncated, as native durations are. */
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("0.0259 seconds") "]")), 25);
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("5 seconds") "]")), 5000);
	/* The first reason that names one. */
	assert_int_equal(duration_of(KILL("[\"other\",7," ALLOWANCE("2.5 seconds") "]")), 2500);
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("999999999 seconds") "]")), 999999999000LL);
	/* Unreadable: too many digits, no number, another unit, no reasons. */
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("1000000000 seconds") "]")), -1);
	assert_int_equal(duration_of(KILL("[" ALLOWANCE(".5 seconds") "]")), -1);
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("10.00 minutes") "]")), -1);
	assert_int_equal(duration_of(KILL("[" ALLOWANCE("") "]")), -1);
	assert_int_equal(duration_of(KILL("\"not an array\"")), -1);
	assert_int_equal(duration_of("{\"code\":2343432205}"), -1);
	/* Not a hang: a crash's reasons are no duration. */
	assert_int_equal(duration_of("{\"code\":1,\"reasons\":[" ALLOWANCE("10.00 seconds") "]}"),
			 -1);
#undef ALLOWANCE
#undef KILL
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_cases),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_whole_body_failures_and_crlf),
		cmocka_unit_test(test_hang_duration_from_the_watchdog_reason),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
