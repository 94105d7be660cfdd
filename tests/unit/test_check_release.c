/* test_check_release.c — ALWAYS/NEVER with NDEBUG (a release build): a
 * broken contract does not abort, the code takes its defensive branch. */
#define NDEBUG 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/check.h"

static int defended(int v)
{
	if (NEVER(v < 0))
		return -1;
	if (!ALWAYS(v < 100))
		return -2;
	return v;
}

static void test_defensive_branch(void **state)
{
	(void)state;
	assert_int_equal(CM_CHECKED, 0);
	assert_int_equal(defended(7), 7);
	assert_int_equal(defended(-3), -1);
	assert_int_equal(defended(500), -2);
	/* Worth exactly 0 or 1, like the checked form. */
	assert_int_equal(ALWAYS(42), 1);
	assert_int_equal(NEVER(42), 1);
	assert_int_equal(NEVER(0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defensive_branch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
