/* test_json.c — cm_json_parse: depth scan, NUL bytes, what real clients
 * write (duplicate keys, integers beyond 64 bits, trailing commas), errors;
 * cm_json_dump. */
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

/* JSON.parse and Python's json keep the last value; so does KSCrash's
 * own recorder's reader for its system.memory written twice. */
static void test_duplicates_last_wins(void **state)
{
	(void)state;
	char err[200];
	const char *dup = "{\"a\":1,\"a\":2}";
	json_t *v = cm_json_parse(dup, strlen(dup), 64, err, sizeof err);
	assert_non_null(v);
	assert_int_equal(json_object_size(v), 1);
	assert_int_equal(json_integer_value(json_object_get(v, "a")), 2);
	json_decref(v);
	const char *mem = "{\"system\":{\"memory\":{\"size\":17179869184},"
			  "\"machine\":\"iPhone14,2\",\"memory\":{\"usable\":"
			  "16010616832,\"free\":3427287040}}}";
	v = cm_json_parse(mem, strlen(mem), 64, err, sizeof err);
	assert_non_null(v);
	json_t *m = json_object_get(json_object_get(v, "system"), "memory");
	assert_null(json_object_get(m, "size"));
	assert_int_equal(json_integer_value(json_object_get(m, "usable")),
			 16010616832LL);
	assert_int_equal(json_integer_value(json_object_get(m, "free")),
			 3427287040LL);
	json_decref(v);
}

/* Integers beyond json_int_t become reals near their value; everything
 * within it stays an exact integer. */
static void test_integers_beyond_64_bits(void **state)
{
	(void)state;
	char err[200];
	const char *regs = "{\"x\":[{\"value\":18446744069414586112},"
			   "{\"value\":-9223372036854775809},"
			   "{\"value\":9223372036854775807},"
			   "{\"value\":-9223372036854775808},"
			   "{\"value\":9223372036854775808}],"
			   "\"s\":\"18446744069414586112\"}";
	json_t *v = cm_json_parse(regs, strlen(regs), 64, err, sizeof err);
	if (!v)
		fail_msg("%s", err);
	json_t *x = json_object_get(v, "x");
#define VAL(i) json_object_get(json_array_get(x, i), "value")
	assert_true(json_is_real(VAL(0)));
	/* 184467440694145861e2, within a double's precision of the digits */
	assert_true(json_real_value(VAL(0)) > 1.8446744069414585e19 &&
		    json_real_value(VAL(0)) < 1.8446744069414588e19);
	assert_true(json_is_real(VAL(1)));
	assert_true(json_real_value(VAL(1)) < -9.2233720368547e18);
	assert_true(json_is_integer(VAL(2)));
	assert_int_equal(json_integer_value(VAL(2)), INT64_MAX);
	assert_true(json_is_integer(VAL(3)));
	assert_int_equal(json_integer_value(VAL(3)), INT64_MIN);
	assert_true(json_is_real(VAL(4)));
#undef VAL
	/* Inside a string nothing changes. */
	assert_string_equal(json_string_value(json_object_get(v, "s")),
			    "18446744069414586112");
	json_decref(v);
	/* The caller's bytes are not written. */
	char mine[] = "[18446744069414586112]";
	v = cm_json_parse(mine, strlen(mine), 64, err, sizeof err);
	assert_non_null(v);
	assert_string_equal(mine, "[18446744069414586112]");
	json_decref(v);
	/* Invalid numbers stay invalid: leading zeros, a digit run glued to
	 * another token, and a number beyond a double. */
	const char *bad[] = {"[018446744069414586112]",
			     "[18446744069414586112-5]",
			     "[1x18446744069414586112]"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_null(cm_json_parse(bad[i], strlen(bad[i]), 64, err,
					  sizeof err));
	char huge[400] = "[";
	memset(huge + 1, '9', 350);
	strcpy(huge + 351, "]");
	assert_null(cm_json_parse(huge, strlen(huge), 64, err, sizeof err));
	assert_non_null(strstr(err, "(byte "));
}

/* KSCrash's reader skips a comma before a closing bracket; one that
 * follows no value is still an error. */
static void test_trailing_commas(void **state)
{
	(void)state;
	char err[200];
	const char *ok = "{\"error\":{\"address\":0,\"type\":\"signal\",\n}"
			 ",\"list\":[1,\"a\",[],{}, \t\r\n],\"s\":\",]\",}";
	json_t *v = cm_json_parse(ok, strlen(ok), 64, err, sizeof err);
	if (!v)
		fail_msg("%s", err);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(v, "error"), "type")),
			    "signal");
	assert_int_equal(json_array_size(json_object_get(v, "list")), 4);
	assert_string_equal(json_string_value(json_object_get(v, "s")), ",]");
	json_decref(v);
	const char *bad[] = {"[,]", "{,}", "[1,,]", "{\"a\":,}", "[1 2]", "[1,"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (cm_json_parse(bad[i], strlen(bad[i]), 64, err, sizeof err))
			fail_msg("%s was accepted", bad[i]);
	/* Positions still point into the caller's bytes. */
	const char *late = "[1,]  x";
	assert_null(cm_json_parse(late, strlen(late), 64, err, sizeof err));
	assert_non_null(strstr(err, "column 7"));
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
		cmocka_unit_test(test_duplicates_last_wins),
		cmocka_unit_test(test_integers_beyond_64_bits),
		cmocka_unit_test(test_trailing_commas),
		cmocka_unit_test(test_syntax_error_has_position),
		cmocka_unit_test(test_scalars_and_trailing_garbage),
		cmocka_unit_test(test_dump_matches_jansson),
		cmocka_unit_test(test_dump_refuses_too_deep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
