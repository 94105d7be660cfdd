/* fuzz_native.c — libFuzzer target: ing_parse_native (see fuzz_common.h). */
#include "fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_parse(ing_parse_native, data, size);
}
