/* fuzz_kscrash.c — libFuzzer target: ing_parse_kscrash on arbitrary bytes with the
 * default limits, then the representative stack and grouping of every
 * accepted report; the arena is freed each run. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ing_batch *b = NULL;
	ing_error err;
	if (ing_parse_kscrash((const char *)data, size, NULL, "fuzz-user", &b,
			 &err) == 0) {
		fuzz_exercise(b);
		ing_batch_free(b);
	} else if (b || err.code == ERR_NONE) {
		abort(); /* a failure leaves no batch and names its code */
	}
	return 0;
}
