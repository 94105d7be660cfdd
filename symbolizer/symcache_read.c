/*
 * symcache_read.c — opens symcaches and answers lookups. Works on a byte
 * buffer (our mmap or the caller's) and never calls libdwarf.
 *
 * The file is untrusted (it sits in a data directory, and fuzzers feed it
 * anything), so sym_cache_from_memory checks every bound and index once;
 * afterwards a lookup is a binary search and a walk up inlined_into that
 * needs no checks and allocates nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer/symcache_format.h"
#include "symbolizer/symbolizer.h"

struct sym_cache {
	const uint8_t *data;
	size_t size;
	bool mapped;
	const symc_header *h;
	const char *strings;
	const symc_function *functions;
	const symc_location *locations;
	const uint32_t *starts, *range_locs;
};

static int fail(sym_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(sym_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

static bool section_ok(uint64_t off, uint64_t count, uint64_t elem, uint64_t size)
{
	return off % 4 == 0 && off <= size && count <= (size - off) / elem;
}

static bool str_ok(const symc_header *h, uint32_t s)
{
	return s < h->strings_len;
}

static int validate(struct sym_cache *c, sym_error *err)
{
	if (c->size < sizeof(symc_header))
		return fail(err, SYM_ERR_FORMAT, "symcache: truncated header");
	if ((uintptr_t)c->data % 8 != 0)
		return fail(err, SYM_ERR_FORMAT, "symcache: buffer not 8-byte aligned");
	const symc_header *h = (const symc_header *)c->data;
	if (memcmp(h->magic, SYMC_MAGIC, 8) != 0)
		return fail(err, SYM_ERR_FORMAT, "not a symcache (bad magic)");
	if (h->version != SYM_CACHE_VERSION)
		return fail(err, SYM_ERR_UNSUPPORTED,
			    "symcache version %u, this build reads %u", h->version,
			    SYM_CACHE_VERSION);
	if (h->file_size != c->size)
		return fail(err, SYM_ERR_FORMAT,
			    "symcache: header says %llu bytes, file has %zu",
			    (unsigned long long)h->file_size, c->size);
	if (!section_ok(h->strings_off, h->strings_len, 1, c->size) ||
	    !section_ok(h->functions_off, h->nfunctions, sizeof(symc_function), c->size) ||
	    !section_ok(h->locations_off, h->nlocations, sizeof(symc_location), c->size) ||
	    !section_ok(h->ranges_off, h->nranges, 8, c->size))
		return fail(err, SYM_ERR_FORMAT, "symcache: a section lies outside the file");
	/* Every string must end inside the table: one NUL at its very end
	 * guarantees that for every offset. */
	if (h->strings_len == 0 || c->data[h->strings_off + h->strings_len - 1] != '\0')
		return fail(err, SYM_ERR_FORMAT, "symcache: string table not terminated");
	c->h = h;
	c->strings = (const char *)c->data + h->strings_off;
	c->functions = (const symc_function *)(c->data + h->functions_off);
	c->locations = (const symc_location *)(c->data + h->locations_off);
	c->starts = (const uint32_t *)(c->data + h->ranges_off);
	c->range_locs = c->starts + h->nranges;

	for (uint32_t i = 0; i < h->nfunctions; i++) {
		const symc_function *f = &c->functions[i];
		if (!str_ok(h, f->name) || !str_ok(h, f->symbol))
			return fail(err, SYM_ERR_FORMAT, "symcache: function %u names a bad string", i);
	}
	for (uint32_t i = 0; i < h->nlocations; i++) {
		const symc_location *l = &c->locations[i];
		if (l->function >= h->nfunctions ||
		    (l->file != SYMC_NONE && !str_ok(h, l->file)) ||
		    (l->inlined_into != SYMC_NONE && l->inlined_into >= i))
			return fail(err, SYM_ERR_FORMAT, "symcache: location %u is inconsistent", i);
	}
	for (uint32_t i = 0; i < h->nranges; i++) {
		if (i > 0 && c->starts[i] <= c->starts[i - 1])
			return fail(err, SYM_ERR_FORMAT, "symcache: ranges out of order at %u", i);
		if (c->range_locs[i] != SYMC_NONE && c->range_locs[i] >= h->nlocations)
			return fail(err, SYM_ERR_FORMAT, "symcache: range %u names a bad location", i);
	}
	return SYM_OK;
}

int sym_cache_from_memory(const uint8_t *data, size_t len, sym_cache **out_cache,
			  sym_error *err)
{
	*out_cache = NULL;
	struct sym_cache *c = calloc(1, sizeof *c);
	if (!c)
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	c->data = data;
	c->size = len;
	int rc = validate(c, err);
	if (rc) {
		free(c);
		return rc;
	}
	*out_cache = c;
	return SYM_OK;
}

int sym_cache_open(const char *path, sym_cache **out_cache, sym_error *err)
{
	*out_cache = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, SYM_ERR_IO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, SYM_ERR_IO, "%s: not a readable regular file", path);
	}
	if ((uint64_t)st.st_size < sizeof(symc_header)) {
		close(fd);
		return fail(err, SYM_ERR_FORMAT, "%s: truncated symcache", path);
	}
	size_t len = (size_t)st.st_size;
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return fail(err, SYM_ERR_IO, "%s: mmap: %s", path, strerror(e));
	int rc = sym_cache_from_memory(map, len, out_cache, err);
	if (rc) {
		munmap(map, len);
		return rc;
	}
	(*out_cache)->mapped = true;
	return SYM_OK;
}

void sym_cache_close(sym_cache *cache)
{
	if (!cache)
		return;
	if (cache->mapped)
		munmap((void *)cache->data, cache->size);
	free(cache);
}

void sym_cache_get_info(const sym_cache *c, sym_cache_info *out)
{
	const symc_header *h = c->h;
	memset(out, 0, sizeof *out);
	out->version = h->version;
	out->cputype = h->cputype;
	out->cpusubtype = h->cpusubtype;
	out->arch = sym_arch_from_cpu(h->cputype, h->cpusubtype);
	out->has_uuid = (h->flags & SYMC_FLAG_HAS_UUID) != 0;
	memcpy(out->uuid, h->uuid, 16);
	out->base_address = h->base_address;
	out->text_size = h->text_size;
	out->has_dwarf = (h->flags & SYMC_FLAG_HAS_DWARF) != 0;
	out->functions = h->nfunctions;
	out->ranges = h->nranges;
	out->files = h->nfiles;
	out->source_locations = h->nlocations;
	out->bytes = c->size;
}

size_t sym_cache_lookup(const sym_cache *c, uint64_t addr, sym_frame *out, size_t max)
{
	const symc_header *h = c->h;
	if (addr < h->base_address || addr - h->base_address > UINT32_MAX || max == 0)
		return 0;
	uint32_t off = (uint32_t)(addr - h->base_address);
	uint32_t lo = 0, hi = h->nranges;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->starts[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	uint32_t loc = c->range_locs[lo - 1];
	size_t n = 0;
	while (loc != SYMC_NONE && n < max) {
		const symc_location *l = &c->locations[loc];
		const symc_function *f = &c->functions[l->function];
		sym_frame *fr = &out[n++];
		fr->function = c->strings + f->name;
		fr->symbol = c->strings + f->symbol;
		fr->symbol_address = f->entry == SYMC_NONE ? 0 : h->base_address + f->entry;
		fr->file = l->file == SYMC_NONE ? NULL : c->strings + l->file;
		fr->line = l->line;
		fr->column = l->column;
		fr->inlined = l->inlined_into != SYMC_NONE;
		loc = l->inlined_into;
	}
	return n;
}
