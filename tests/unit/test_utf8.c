/* common/utf8: which byte sequences are UTF-8 (RFC 3629). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/utf8.h"

static void test_valid(void **state)
{
	(void)state;
	assert_true(cm_utf8_valid(""));
	assert_true(cm_utf8_valid("ascii"));
	assert_true(cm_utf8_valid("caf\xc3\xa9"));	/* é */
	assert_true(cm_utf8_valid("\xe2\x82\xac"));	/* € */
	assert_true(cm_utf8_valid("\xed\x9f\xbf"));	/* U+D7FF */
	assert_true(cm_utf8_valid("\xf0\x9f\x98\x80")); /* U+1F600 */
	assert_true(cm_utf8_valid("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
	assert_int_equal(cm_utf8_len((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
}

static void test_invalid(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"caf\xe9",	    /* Latin-1 */
		"\x80",		    /* stray continuation */
		"\xc0\xaf",	    /* overlong '/' */
		"\xc1\xbf",	    /* overlong */
		"\xe0\x9f\xbf",	    /* overlong 3-byte */
		"\xf0\x8f\xbf\xbf", /* overlong 4-byte */
		"\xed\xa0\x80",	    /* surrogate U+D800 */
		"\xf4\x90\x80\x80", /* past U+10FFFF */
		"\xf5\x80\x80\x80", /* no such lead byte */
		"\xe2\x82",	    /* cut short by the end */
		"\xe2\x82x",	    /* cut short by ASCII */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(cm_utf8_valid(bad[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
