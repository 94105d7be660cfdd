/* fuzz_matrix.c — libFuzzer target: ing_parse_matrix (see fuzz_common.h). */
#include "fuzz/fuzz_common.h"
#include "ingest/matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_parse(ing_parse_matrix, data, size);
}
