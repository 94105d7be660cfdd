/* test_json.c — cm_json_parse: depth scan, NUL bytes, duplicates, errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"

static char *nested(size_t depth)
{
	char *s = malloc(2 * depth + 1);
	assert_non_null(s);
	for (size_t i = 0; i < depth; i++) {
		s[i] = '[';
		s[2 * depth - 1 - i] = ']';
	}
	s[2 * depth] = '\0';
	return s;
}

static void test_depth_at_and_over_limit(void **state)
{
	(void)state;
	char err[200];
	char *ok = nested(64), *over = nested(65);
	json_t *v = cm_json_parse(ok, strlen(ok), 64, err, sizeof err);
	assert_non_null(v);
	json_decref(v);
	assert_null(cm_json_parse(over, strlen(over), 64, err, sizeof err));
	assert_non_null(strstr(err, "nesting deeper than 64 at byte 64"));
	free(ok);
	free(over);
}

static void test_brackets_in_strings_do_not_count(void **state)
{
	(void)state;
	char err[200];
	/* 70 brackets inside a string, an escaped quote before them. */
	char body[256];
	strcpy(body, "{\"a\":\"\\\"");
	for (int i = 0; i < 70; i++)
		strcat(body, "[");
	strcat(body, "\"}");
	json_t *v = cm_json_parse(body, strlen(body), 2, err, sizeof err);
	assert_non_null(v);
	assert_int_equal(json_string_length(json_object_get(v, "a")), 71);
	json_decref(v);
	/* An escaped backslash ends the escape: the quote after it closes
	 * the string, so the brackets after it count. */
	const char *b2 = "[\"\\\\\",[[[]]]]";
	assert_null(cm_json_parse(b2, strlen(b2), 3, err, sizeof err));
	assert_non_null(strstr(err, "nesting deeper than 3"));
	v = cm_json_parse(b2, strlen(b2), 4, err, sizeof err);
	assert_non_null(v);
	json_decref(v);
}

static void test_nul_bytes_rejected(void **state)
{
	(void)state;
	char err[200];
	const char outside[] = "{\"a\":1}\0";
	assert_null(cm_json_parse(outside, sizeof outside - 1, 64, err,
				  sizeof err));
	assert_string_equal(err, "NUL byte at byte 7");
	const char inside[] = "[\"a\0b\"]";
	assert_null(cm_json_parse(inside, sizeof inside - 1, 64, err,
				  sizeof err));
	assert_string_equal(err, "NUL byte at byte 3");
	const char escaped[] = "[\"a\\\0\"]";
	assert_null(cm_json_parse(escaped, sizeof escaped - 1, 64, err,
				  sizeof err));
	assert_string_equal(err, "NUL byte at byte 4");
	/* \u0000 is refused by jansson itself. */
	const char *u0 = "[\"a\\u0000\"]";
	assert_null(cm_json_parse(u0, strlen(u0), 64, err, sizeof err));
}

static void test_duplicates_rejected(void **state)
{
	(void)state;
	char err[200];
	const char *dup = "{\"a\":1,\"a\":2}";
	assert_null(cm_json_parse(dup, strlen(dup), 64, err, sizeof err));
	assert_non_null(strstr(err, "duplicate"));
}

static void test_syntax_error_has_position(void **state)
{
	(void)state;
	char err[200];
	const char *bad = "{\"a\":[1,2,}";
	assert_null(cm_json_parse(bad, strlen(bad), 64, err, sizeof err));
	assert_non_null(strstr(err, "(byte "));
	assert_non_null(strstr(err, "line 1"));
	assert_null(cm_json_parse("", 0, 64, err, sizeof err));
	assert_string_equal(err, "empty document");
	/* NULL error buffer is allowed. */
	assert_null(cm_json_parse(bad, strlen(bad), 64, NULL, 0));
}

static void test_scalars_and_trailing_garbage(void **state)
{
	(void)state;
	char err[200];
	json_t *v = cm_json_parse("42", 2, 64, err, sizeof err);
	assert_non_null(v);
	assert_true(json_is_integer(v));
	json_decref(v);
	assert_null(cm_json_parse("{} {}", 5, 64, err, sizeof err));
}


/* cm_json_dump must print exactly what json_dumps prints. */
static void assert_dumps_alike(const json_t *v)
{
	char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t len = 0;
	char *got = cm_json_dump(v, &len);
	assert_non_null(want);
	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(len, strlen(want));
	free(want);
	free(got);
}

static void test_dump_matches_jansson(void **state)
{
	(void)state;
	/* Every ASCII byte, in values and in keys, and multi-byte UTF-8. */
	char ascii[128];
	for (int i = 1; i < 128; i++)
		ascii[i - 1] = (char)i;
	ascii[127] = '\0';
	json_t *shared = json_pack("[{s:s,s:i}]", "function", "-[A b:]", "line", 12);
	json_t *v = json_pack("{s:s,s:s,s:s%,s:I,s:I,s:i,s:f,s:f,s:b,s:b,s:n,s:[],s:{},"
			      "s:[O,O],s:[[[]]]}",
			      ascii, "key with every byte", "text", ascii, "nul inside", "a\0b",
			      (size_t)3, "max", (json_int_t)INT64_MAX, "min",
			      (json_int_t)INT64_MIN, "zero", 0, "real", 0.05, "big real",
			      1e300, "yes", 1, "no", 0, "nothing", "empty array",
			      "empty object", "shared", shared, shared, "nested");
	assert_non_null(v);
	json_object_set_new(v, "utf8", json_string("caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80"));
	assert_dumps_alike(v);
	/* Insertion order survives deletions and replacements. */
	json_object_del(v, "text");
	json_object_set_new(v, "max", json_string("replaced"));
	assert_dumps_alike(v);
	json_t *scalars[] = {json_string(""), json_integer(-7), json_real(-1.5), json_true(),
			     json_null()};
	for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
		assert_dumps_alike(scalars[i]);
		json_decref(scalars[i]);
	}
	json_decref(shared);
	json_decref(v);
}

static void test_dump_refuses_too_deep(void **state)
{
	(void)state;
	json_t *v = json_array();
	for (int i = 0; i < CM_JSON_DUMP_DEPTH; i++) {
		json_t *outer = json_array();
		json_array_append_new(outer, v);
		v = outer;
	}
	char *text = cm_json_dump(v, NULL);
	assert_non_null(text); /* CM_JSON_DUMP_DEPTH + 1 levels: the limit */
	free(text);
	json_t *outer = json_array();
	json_array_append_new(outer, v);
	assert_null(cm_json_dump(outer, NULL));
	json_decref(outer);
	assert_null(cm_json_dump(NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_depth_at_and_over_limit),
		cmocka_unit_test(test_brackets_in_strings_do_not_count),
		cmocka_unit_test(test_nul_bytes_rejected),
		cmocka_unit_test(test_duplicates_rejected),
		cmocka_unit_test(test_syntax_error_has_position),
		cmocka_unit_test(test_scalars_and_trailing_garbage),
		cmocka_unit_test(test_dump_matches_jansson),
		cmocka_unit_test(test_dump_refuses_too_deep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
