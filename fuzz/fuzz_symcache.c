/* fuzz_symcache.c — libFuzzer target for the symcache reader: validation,
 * then lookups across the address space. The custom mutator keeps the
 * magic, version and recorded size right, since a mutant failing those is
 * rejected before the interesting checks, and aims a quarter of its
 * mutations at the page directory, which lookups follow without searching
 * (symcache_format.h): a mutant directory must be refused at open or lead
 * every lookup inside the tables. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_target.h"
#include "symbolizer/symcache_format.h"
#include "symbolizer/symbolizer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The reader wants 8-byte alignment, as an mmap gives. */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	sym_cache *cache = NULL;
	sym_error err;
	if (sym_cache_from_memory(copy, size, &cache, &err) == SYM_OK) {
		sym_cache_info info;
		sym_cache_get_info(cache, &info);
		sym_frame frames[SYM_MAX_FRAMES];
		for (uint64_t a = 0; a < 0x40000; a += 7)
			(void)sym_cache_lookup(cache, info.base_address + a, frames,
					       SYM_MAX_FRAMES);
		(void)sym_cache_lookup(cache, UINT64_MAX, frames, SYM_MAX_FRAMES);
		/* Past the directory's last page, and at each page's first and
		 * last byte. */
		for (uint64_t a = 0; a < 64; a++) {
			uint64_t page = (uint64_t)1 << ((const symc_header *)copy)->page_shift;
			(void)sym_cache_lookup(cache, info.base_address + a * page, frames,
					       SYM_MAX_FRAMES);
			(void)sym_cache_lookup(cache, info.base_address + a * page - 1, frames,
					       SYM_MAX_FRAMES);
		}
		(void)sym_cache_lookup(cache, info.base_address + UINT32_MAX, frames,
				       SYM_MAX_FRAMES);
		sym_cache_close(cache);
	} else if (!err.msg[0]) {
		abort();
	}
	free(copy);
	return 0;
}

/* Changes one byte of the page directory or of the ranges, where the
 * header places them, when they lie in the data. */
static void mutate_index(uint8_t *data, size_t size, unsigned int seed)
{
	symc_header h;
	memcpy(&h, data, sizeof h);
	uint64_t off = seed / 4 % 2 ? h.pages_off : h.ranges_off;
	uint64_t len = seed / 4 % 2 ? ((uint64_t)h.npages + 1) * sizeof(symc_page)
				    : 6 * (uint64_t)h.nranges;
	if (off < size && len > 0) {
		uint64_t at = off + (seed / 8) % len;
		if (at < size)
			data[at] = (uint8_t)(data[at] + 1 + (seed >> 24) % 255);
	}
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	if (size >= sizeof(symc_header) && seed % 4 == 1)
		mutate_index(data, size, seed);
	else
		size = LLVMFuzzerMutate(data, size, max_size);
	if (size >= 128 && seed % 8 != 0) {
		uint32_t version = SYM_CACHE_VERSION;
		uint64_t file_size = size;
		memcpy(data, "SSYMCACH", 8);
		memcpy(data + 8, &version, 4);
		memcpy(data + 56, &file_size, 8);
	}
	return size;
}
