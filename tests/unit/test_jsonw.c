/* test_jsonw.c — the JSON text writer prints what jansson prints for the
 * same values, places commas itself, and writes hex and integers at their
 * limits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/jsonw.h"

/* Every ASCII byte but NUL, a NUL in the middle, and UTF-8 beyond ASCII. */
static size_t awkward_string(char *buf)
{
	size_t n = 0;
	for (int c = 1; c < 128; c++)
		buf[n++] = (char)c;
	buf[n++] = '\0';
	memcpy(buf + n, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9);
	return n + 9;
}

static void test_matches_jansson(void **state)
{
	(void)state;
	char s[160];
	size_t slen = awkward_string(s);

	cm_jw w = {0};
	cm_jw_object(&w);
	cm_jw_key(&w, "s");
	cm_jw_stringn(&w, s, slen);
	cm_jw_key(&w, "ints");
	cm_jw_array(&w);
	const int64_t ints[] = {0, 1, -1, 9, 10, -10, 1234567890123, INT64_MAX, INT64_MIN};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		cm_jw_int(&w, ints[i]);
	cm_jw_array_end(&w);
	cm_jw_key(&w, "flags");
	cm_jw_array(&w);
	cm_jw_bool(&w, true);
	cm_jw_bool(&w, false);
	cm_jw_null(&w);
	cm_jw_string(&w, NULL);
	cm_jw_array(&w);
	cm_jw_array_end(&w);
	cm_jw_object(&w);
	cm_jw_object_end(&w);
	cm_jw_array_end(&w);
	cm_jw_key(&w, "raw");
	cm_jw_raw(&w, "{\"a\":[1,2]}", 11);
	cm_jw_key(&w, "nested");
	cm_jw_array(&w);
	cm_jw_object(&w);
	cm_jw_key(&w, "k");
	cm_jw_string(&w, "v");
	cm_jw_object_end(&w);
	cm_jw_object(&w);
	cm_jw_object_end(&w);
	cm_jw_array_end(&w);
	cm_jw_object_end(&w);
	size_t len = 0;
	char *got = cm_jw_finish(&w, &len);
	assert_non_null(got);
	assert_int_equal(strlen(got), len);

	json_t *ints_j = json_array();
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		json_array_append_new(ints_j, json_integer(ints[i]));
	json_t *want_tree =
		json_pack("{s:s%,s:o,s:[b,b,n,n,[],{}],s:{s:[i,i]},s:[{s:s},{}]}", "s", s, slen,
			  "ints", ints_j, "flags", 1, 0, "raw", "a", 1, 2, "nested", "k", "v");
	assert_non_null(want_tree);
	char *want = json_dumps(want_tree, JSON_COMPACT);
	assert_string_equal(got, want);
	free(want);
	json_decref(want_tree);
	free(got);
}

static void test_hex(void **state)
{
	(void)state;
	cm_jw w = {0};
	cm_jw_array(&w);
	cm_jw_hex(&w, 0);
	cm_jw_hex(&w, 0x1a2b);
	cm_jw_hex(&w, 0x100000000ull);
	cm_jw_hex(&w, UINT64_MAX);
	cm_jw_array_end(&w);
	char *got = cm_jw_finish(&w, NULL);
	assert_string_equal(got, "[\"0x0\",\"0x1a2b\",\"0x100000000\",\"0xffffffffffffffff\"]");
	free(got);
}

/* A finished writer starts over empty; a top-level scalar needs no
 * container. */
static void test_finish_resets(void **state)
{
	(void)state;
	cm_jw w = {0};
	cm_jw_int(&w, 5);
	char *a = cm_jw_finish(&w, NULL);
	cm_jw_string(&w, "x");
	char *b = cm_jw_finish(&w, NULL);
	assert_string_equal(a, "5");
	assert_string_equal(b, "\"x\"");
	free(a);
	free(b);
}

/* An optional member is left out when unknown; lines of JSON Lines are
 * values of their own, not elements of a list. */
static void test_optional_and_lines(void **state)
{
	(void)state;
	cm_jw w = {0};
	cm_jw_object(&w);
	cm_jw_optional_string(&w, "file", NULL);
	cm_jw_optional_string(&w, "name", "a\"b");
	cm_jw_optional_string(&w, "arch", NULL);
	cm_jw_object_end(&w);
	cm_jw_line_end(&w);
	cm_jw_int(&w, 7);
	cm_jw_line_end(&w);
	char *got = cm_jw_finish(&w, NULL);
	assert_string_equal(got, "{\"name\":\"a\\\"b\"}\n7\n");
	free(got);
}

/* Reals as json_dumps prints them: the rates of the comparison reply. */
static void test_reals_match_jansson(void **state)
{
	(void)state;
	const double reals[] = {0.0,	 1.0,	   -2.0,  0.1,	    0.2024451048912984,
				1e-05,	 1.5e-300, 1e300, -7.25e21, 123456789012345678.0,
				1.0 / 3, 4.9e-324, 1e22,  100.0};
	cm_jw w = {0};
	json_t *want_tree = json_array();
	cm_jw_array(&w);
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
		cm_jw_real(&w, reals[i]);
		json_array_append_new(want_tree, json_real(reals[i]));
	}
	cm_jw_real(&w, INFINITY);
	cm_jw_real(&w, NAN);
	json_array_append_new(want_tree, json_null());
	json_array_append_new(want_tree, json_null());
	cm_jw_array_end(&w);
	char *got = cm_jw_finish(&w, NULL);
	char *want = json_dumps(want_tree, JSON_COMPACT);
	assert_string_equal(got, want);
	free(got);
	free(want);
	json_decref(want_tree);
}

/* Through a memo, the same text as without: 20,000 values of which many
 * repeat and many share a slot (more values than slots), -0.0 beside 0.0
 * (equal, different bits), and the non-finite ones, which are never kept. */
static void test_memoized_reals_as_printed(void **state)
{
	(void)state;
	cm_jw_real_memo *memo = calloc(1, sizeof *memo);
	assert_non_null(memo);
	cm_jw plain = {0}, memoized = {0};
	cm_jw_array(&plain);
	cm_jw_array(&memoized);
	uint64_t x = 88172645463325252u;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		double v = i % 3 == 0	? (double)(x % 50) / 977.0
			   : i % 3 == 1 ? (double)x / 1e10
					: (i % 7 == 0	 ? -0.0
					   : i % 11 == 0 ? NAN
							 : 0.0);
		cm_jw_real(&plain, v);
		cm_jw_real_memoized(&memoized, memo, v);
	}
	cm_jw_array_end(&plain);
	cm_jw_array_end(&memoized);
	char *want = cm_jw_finish(&plain, NULL), *got = cm_jw_finish(&memoized, NULL);
	assert_string_equal(got, want);
	free(want);
	free(got);
	free(memo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches_jansson),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_finish_resets),
		cmocka_unit_test(test_optional_and_lines),
		cmocka_unit_test(test_reals_match_jansson),
		cmocka_unit_test(test_memoized_reals_as_printed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
