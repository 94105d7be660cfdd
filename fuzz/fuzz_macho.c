/* fuzz_macho.c — libFuzzer target for the Mach-O parser and the symcache
 * builder behind it (DWARF through libdwarf included): parse, build every
 * slice's symcache, reopen it, look addresses up. The custom mutator puts a
 * valid Mach-O or fat magic back at the start of most mutants, so the
 * fuzzer spends its time past the first check. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "symbolizer/symbolizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sym_object *obj = NULL;
	sym_error err;
	if (sym_object_from_memory(data, size, &obj, &err) != SYM_OK) {
		if (!err.msg[0])
			abort(); /* every failure explains itself */
		return 0;
	}
	for (size_t i = 0; i < sym_object_slice_count(obj); i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		if (sym_cache_build(obj, i, &buf, &len, NULL, &err) != SYM_OK)
			continue;
		sym_cache *cache = NULL;
		/* What we write, we must be able to read. */
		if (sym_cache_from_memory(buf, len, &cache, &err) != SYM_OK)
			abort();
		sym_cache_info info;
		sym_cache_get_info(cache, &info);
		sym_frame frames[SYM_MAX_FRAMES];
		for (uint64_t a = 0; a < 0x10000; a += 61)
			(void)sym_cache_lookup(cache, info.base_address + a, frames,
					       SYM_MAX_FRAMES);
		sym_cache_close(cache);
		free(buf);
	}
	sym_object_free(obj);
	return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static const uint8_t magics[][4] = {
		{0xcf, 0xfa, 0xed, 0xfe}, /* MH_MAGIC_64, little-endian */
		{0xce, 0xfa, 0xed, 0xfe}, /* MH_MAGIC */
		{0xca, 0xfe, 0xba, 0xbe}, /* FAT_MAGIC */
		{0xca, 0xfe, 0xba, 0xbf}, /* FAT_MAGIC_64 */
	};
	size = LLVMFuzzerMutate(data, size, max_size);
	if (size >= 4 && seed % 8 != 0)
		memcpy(data, magics[seed % 4], 4);
	return size;
}
