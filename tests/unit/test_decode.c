/* test_decode.c — gzip/deflate/identity bodies, bombs, truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ingest/decode.h"

/* Compresses LEN bytes of IN: WBITS 15+16 gzip, 15 zlib, -15 raw. */
static uint8_t *squeeze(const void *in, size_t len, int wbits, size_t *out_len)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, wbits, 9,
				      Z_DEFAULT_STRATEGY),
			 Z_OK);
	size_t cap = deflateBound(&zs, (uLong)len) + 64;
	uint8_t *out = malloc(cap);
	assert_non_null(out);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*out_len = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

static const char text[] = "{\"report_id\":\"r\",\"images\":[],"
			   "\"threads\":[{\"frames\":[\"0x1\"]}]}";

static void roundtrip(const char *enc, int wbits)
{
	size_t clen, olen;
	uint8_t *c = squeeze(text, strlen(text), wbits, &clen);
	uint8_t *out;
	ing_error err;
	assert_int_equal(ing_decode_body(enc, c, clen, 1 << 20, &out, &olen,
					 &err),
			 0);
	assert_int_equal(olen, strlen(text));
	assert_memory_equal(out, text, olen);
	assert_int_equal(out[olen], 0);
	free(out);
	free(c);
}

static void test_roundtrips(void **state)
{
	(void)state;
	roundtrip("gzip", 15 + 16);
	roundtrip(" GZip ", 15 + 16);
	roundtrip("x-gzip", 15 + 16);
	roundtrip("deflate", 15);  /* zlib-wrapped, as HTTP says */
	roundtrip("Deflate", -15); /* raw, as some clients send */
	uint8_t *out;
	size_t olen;
	ing_error err;
	const char *encs[] = {NULL, "", "identity"};
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(ing_decode_body(encs[i], (const uint8_t *)text,
						 strlen(text), 1 << 20, &out,
						 &olen, &err),
				 0);
		assert_int_equal(olen, strlen(text));
		assert_memory_equal(out, text, olen);
		free(out);
	}
	assert_int_equal(ing_decode_body(NULL, (const uint8_t *)"", 0, 10,
					 &out, &olen, &err),
			 0);
	assert_int_equal(olen, 0);
	free(out);
}

static void test_unsupported_and_identity_limit(void **state)
{
	(void)state;
	uint8_t *out = (uint8_t *)1;
	size_t olen;
	ing_error err;
	assert_int_equal(ing_decode_body("br", (const uint8_t *)"x", 1, 10,
					 &out, &olen, &err),
			 -1);
	assert_null(out);
	assert_int_equal(err.code, ERR_UNSUPPORTED_MEDIA);
	assert_int_equal(ing_decode_body("gzip, deflate", (const uint8_t *)"x",
					 1, 10, &out, &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_UNSUPPORTED_MEDIA);
	assert_int_equal(ing_decode_body("identity", (const uint8_t *)"12345",
					 5, 4, &out, &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_BODY_TOO_LARGE);
	assert_int_equal(ing_decode_body("gzip", (const uint8_t *)"", 0, 4,
					 &out, &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_ENCODING);
}

static void test_bomb_and_exact_limit(void **state)
{
	(void)state;
	/* 64 MiB of zeros squeeze to ~64 KiB; with a 16 MiB limit it must
	 * stop with ERR_DECOMPRESSED_TOO_LARGE. */
	size_t big = 64u << 20, clen, olen;
	uint8_t *zeros = calloc(1, big);
	assert_non_null(zeros);
	uint8_t *bomb = squeeze(zeros, big, 15 + 16, &clen);
	free(zeros);
	assert_true(clen < 200 * 1024);
	uint8_t *out = (uint8_t *)1;
	ing_error err;
	assert_int_equal(ing_decode_body("gzip", bomb, clen, 16u << 20, &out,
					 &olen, &err),
			 -1);
	assert_null(out);
	assert_int_equal(err.code, ERR_DECOMPRESSED_TOO_LARGE);
	free(bomb);

	/* Exactly at the limit passes; one byte over fails. */
	uint8_t data[1000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7);
	uint8_t *c = squeeze(data, sizeof data, 15 + 16, &clen);
	assert_int_equal(ing_decode_body("gzip", c, clen, 1000, &out, &olen,
					 &err),
			 0);
	assert_int_equal(olen, 1000);
	assert_memory_equal(out, data, 1000);
	free(out);
	assert_int_equal(ing_decode_body("gzip", c, clen, 999, &out, &olen,
					 &err),
			 -1);
	assert_int_equal(err.code, ERR_DECOMPRESSED_TOO_LARGE);
	free(c);
}

static void test_truncated_corrupt_trailing(void **state)
{
	(void)state;
	uint8_t data[5000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)((i * 2654435761u) >> 13);
	size_t clen, olen;
	uint8_t *c = squeeze(data, sizeof data, 15 + 16, &clen);
	uint8_t *out;
	ing_error err;
	/* Every truncation point fails as bad encoding. */
	for (size_t cut = 1; cut < clen; cut += 97) {
		assert_int_equal(ing_decode_body("gzip", c, cut, 1 << 20, &out,
						 &olen, &err),
				 -1);
		assert_int_equal(err.code, ERR_BAD_ENCODING);
	}
	assert_int_equal(ing_decode_body("gzip", c, clen - 1, 1 << 20, &out,
					 &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_ENCODING);
	/* A flipped byte in the middle: corrupt data or CRC mismatch. */
	uint8_t *bad = malloc(clen);
	memcpy(bad, c, clen);
	bad[clen / 2] ^= 0x55;
	assert_int_equal(ing_decode_body("gzip", bad, clen, 1 << 20, &out,
					 &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_ENCODING);
	free(bad);
	/* Trailing garbage after the stream. */
	uint8_t *trail = malloc(clen + 3);
	memcpy(trail, c, clen);
	memcpy(trail + clen, "xyz", 3);
	assert_int_equal(ing_decode_body("gzip", trail, clen + 3, 1 << 20, &out,
					 &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_ENCODING);
	free(trail);
	/* Two gzip members concatenated decode to both. */
	uint8_t *two = malloc(2 * clen);
	memcpy(two, c, clen);
	memcpy(two + clen, c, clen);
	assert_int_equal(ing_decode_body("gzip", two, 2 * clen, 1 << 20, &out,
					 &olen, &err),
			 0);
	assert_int_equal(olen, 2 * sizeof data);
	assert_memory_equal(out + sizeof data, data, sizeof data);
	free(out);
	free(two);
	/* Not compressed at all. */
	assert_int_equal(ing_decode_body("gzip", (const uint8_t *)"{}", 2,
					 1 << 20, &out, &olen, &err),
			 -1);
	assert_int_equal(err.code, ERR_BAD_ENCODING);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrips),
		cmocka_unit_test(test_unsupported_and_identity_limit),
		cmocka_unit_test(test_bomb_and_exact_limit),
		cmocka_unit_test(test_truncated_corrupt_trailing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
