/* test_report.c — the arena, kind names, default limits, ing_error_set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "ingest/report.h"

static void test_arena_alignment_and_zeroing(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	assert_non_null(a);
	for (size_t sz = 0; sz < 300; sz += 7) {
		unsigned char *p = ing_arena_alloc(a, sz);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		for (size_t i = 0; i < sz; i++)
			assert_int_equal(p[i], 0);
		memset(p, 0xab, sz);
	}
	/* Zero-size allocations are distinct valid pointers. */
	void *z1 = ing_arena_alloc(a, 0), *z2 = ing_arena_alloc(a, 0);
	assert_non_null(z1);
	assert_ptr_not_equal(z1, z2);
	/* A big allocation after small ones still works and is aligned. */
	unsigned char *big = ing_arena_alloc(a, 1 << 20);
	assert_non_null(big);
	assert_int_equal((uintptr_t)big % 16, 0);
	big[(1 << 20) - 1] = 1;
	/* The small chunk is still used after the big one. */
	unsigned char *small = ing_arena_alloc(a, 16);
	assert_non_null(small);
	ing_arena_free(a);
	ing_arena_free(NULL);
}

static void test_arena_limit(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(100 * 1024);
	assert_non_null(a);
	assert_non_null(ing_arena_alloc(a, 60 * 1024));
	assert_false(ing_arena_over_limit(a));
	assert_null(ing_arena_alloc(a, 60 * 1024));
	assert_true(ing_arena_over_limit(a));
	assert_true(ing_arena_used(a) <= 100 * 1024);
	/* Something small still fits the remaining budget. */
	assert_non_null(ing_arena_alloc(a, 1024));
	assert_true(ing_arena_used(a) <= 100 * 1024);
	ing_arena_free(a);
}

static void test_arena_overflow_checks(void **state)
{
	(void)state;
	ing_arena *a = ing_arena_new(0);
	assert_null(ing_arena_calloc(a, SIZE_MAX / 2, 4));
	assert_null(ing_arena_alloc(a, SIZE_MAX));
	assert_null(ing_arena_alloc(a, SIZE_MAX - 8));
	assert_non_null(ing_arena_calloc(a, 0, 16));
	assert_non_null(ing_arena_calloc(a, 10, 16));
	char *s = ing_arena_strndup(a, "hello world", 5);
	assert_string_equal(s, "hello");
	assert_string_equal(ing_arena_strdup(a, "abc"), "abc");
	assert_null(ing_arena_strdup(a, NULL));
	ing_arena_free(a);
}

static void test_kinds(void **state)
{
	(void)state;
	const char *names[] = {"stall", "hang", "cpu", "crash"};
	for (int i = 0; i < 4; i++) {
		ing_kind k;
		assert_string_equal(ing_kind_name((ing_kind)i), names[i]);
		assert_true(ing_kind_parse(names[i], &k));
		assert_int_equal(k, i);
	}
	ing_kind k = ING_KIND_CPU;
	assert_false(ing_kind_parse("Stall", &k));
	assert_false(ing_kind_parse("", &k));
	assert_false(ing_kind_parse(NULL, &k));
	assert_int_equal(k, ING_KIND_CPU);
	assert_string_equal(ing_kind_name((ing_kind)42), "unknown");
}

static void test_limits_default(void **state)
{
	(void)state;
	ing_limits l = ing_limits_default();
	assert_int_equal(l.max_reports, 1000);
	assert_int_equal(l.max_threads, 64);
	assert_int_equal(l.max_frames, 2048);
	assert_int_equal(l.max_images, 1024);
	assert_int_equal(l.max_string, 4096);
	assert_int_equal(l.max_dimension, 256);
	assert_int_equal(l.max_depth, 64);
	assert_int_equal(l.max_samples, 1024);
	assert_int_equal(l.max_memory, 256u * 1024 * 1024);
}

static void test_error_set(void **state)
{
	(void)state;
	ing_error e = {0};
	assert_int_equal(ing_error_set(&e, ERR_BAD_FIELD, "%s[%d]: bad",
				       "threads", 3),
			 -1);
	assert_int_equal(e.code, ERR_BAD_FIELD);
	assert_string_equal(e.message, "threads[3]: bad");
	char longs[600];
	memset(longs, 'x', sizeof longs - 1);
	longs[sizeof longs - 1] = '\0';
	ing_error_set(&e, ERR_TOO_MANY, "%s", longs);
	assert_int_equal(strlen(e.message), sizeof e.message - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_alignment_and_zeroing),
		cmocka_unit_test(test_arena_limit),
		cmocka_unit_test(test_arena_overflow_checks),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_limits_default),
		cmocka_unit_test(test_error_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
