/* test_auth.c — credentials: shape, kind prefixes, uniqueness, hashing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sodium.h>
#include <string.h>

#include "server/http/auth.h"

static void test_generate_shape_and_kind(void **state)
{
	(void)state;
	static const char *const prefixes[] = {"ssi_", "ssu_", "ssa_"};
	for (int k = 0; k < 3; k++) {
		char token[SRV_TOKEN_SIZE];
		srv_token_generate((st_cred)k, token);
		assert_int_equal(strlen(token), 47);
		assert_memory_equal(token, prefixes[k], 4);
		st_cred kind;
		assert_true(srv_token_kind(token, &kind));
		assert_int_equal(kind, k);
		/* 32 random bytes in URL-safe base64: nothing to escape. */
		assert_int_equal(strspn(token + 4,
					"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijkl"
					"mnopqrstuvwxyz0123456789-_"),
				 43);
	}
}

static void test_tokens_differ(void **state)
{
	(void)state;
	char a[SRV_TOKEN_SIZE], b[SRV_TOKEN_SIZE];
	srv_token_generate(ST_CRED_UPLOAD, a);
	srv_token_generate(ST_CRED_UPLOAD, b);
	assert_string_not_equal(a, b);
}

static void test_malformed_tokens(void **state)
{
	(void)state;
	st_cred kind;
	const char *bad[] = {
		"",
		"ssu_",
		"ssx_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"ssu_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",   /* 42 */
		"ssu_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", /* 44 */
		"ssu_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"ssu_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/",
		"SSU_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		NULL};
	for (size_t i = 0; bad[i]; i++)
		assert_false(srv_token_kind(bad[i], &kind));
	assert_true(srv_token_kind(
		"ssa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &kind));
	assert_int_equal(kind, ST_CRED_ADMIN);
}

static void test_hash_is_blake2b_of_the_whole_token(void **state)
{
	(void)state;
	const char *token = "ssu_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
	uint8_t h[ST_HASH_LEN], want[ST_HASH_LEN], other[ST_HASH_LEN];
	srv_token_hash(token, h);
	crypto_generichash(want, sizeof want, (const unsigned char *)token,
			   strlen(token), NULL, 0);
	assert_memory_equal(h, want, ST_HASH_LEN);
	/* The prefix is hashed too: the same bytes of another kind differ. */
	srv_token_hash("ssa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", other);
	assert_memory_not_equal(h, other, ST_HASH_LEN);
}

int main(void)
{
	if (sodium_init() < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_shape_and_kind),
		cmocka_unit_test(test_tokens_differ),
		cmocka_unit_test(test_malformed_tokens),
		cmocka_unit_test(test_hash_is_blake2b_of_the_whole_token),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
