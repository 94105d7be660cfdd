/* fuzz_decode.c — libFuzzer target: ing_decode_body. The first byte picks
 * the Content-Encoding, the rest is the body; output capped at 1 MiB. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "ingest/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const encs[] = {"gzip", "deflate", "identity",
					   NULL, "x-gzip", "br"};
	if (size == 0)
		return 0;
	const char *enc = encs[data[0] % (sizeof encs / sizeof encs[0])];
	uint8_t *out = NULL;
	size_t out_len = 0;
	ing_error err;
	const size_t max_out = 1u << 20;
	if (ing_decode_body(enc, data + 1, size - 1, max_out, &out, &out_len,
			    &err) == 0) {
		if (!out || out_len > max_out || out[out_len] != '\0')
			abort();
		free(out);
	} else if (out) {
		abort();
	}
	return 0;
}
