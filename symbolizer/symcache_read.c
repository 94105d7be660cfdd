/*
 * symcache_read.c — opens symcaches and answers lookups. Works on a byte
 * buffer (our mmap or the caller's) and never calls libdwarf.
 *
 * The file is untrusted (it sits in a data directory, and fuzzers feed it
 * anything), so sym_cache_from_memory checks every bound and index once —
 * the page directory included, so that every page's slice of the range and
 * block tables is in bounds and sorted; afterwards a lookup is a directory
 * read, two short searches within one page and a walk up inlined_into that
 * needs no checks and allocates nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "symbolizer/symcache_format.h"
#include "symbolizer/symbolizer.h"
#include "symbolizer/util.h"

struct sym_cache {
	const uint8_t *data;
	size_t size;
	bool mapped;
	const symc_header *h;
	const char *strings;
	const uint32_t *files;
	const symc_function *functions;
	const uint8_t *scopes;
	const uint8_t *ranges; /* per page: u16 starts[n], u32 scopes[n] */
	const uint8_t *lines;
	const symc_line_block *blocks;
	const symc_page *pages;
};

/* Reads a ULEB128 value of at most 32 bits from [*p, end); false when it
 * runs past END or does not fit. */
static bool get_uleb32(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*p >= end)
			return false;
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (v > UINT32_MAX)
				return false;
			*out = (uint32_t)v;
			return true;
		}
	}
	return false;
}

/* A ULEB128 value of at most 64 bits (a line entry's head: a 33-bit
 * zigzag delta shifted once). */
static bool get_uleb64(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return false;
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* Applies a line entry's head to the current line; false when the result
 * leaves the u32 range. */
static bool apply_line_delta(uint64_t head, uint32_t *line)
{
	uint64_t z = head >> 1;
	int64_t delta = (z & 1) ? -(int64_t)(z >> 1) - 1 : (int64_t)(z >> 1);
	int64_t next = (int64_t)*line + delta;
	if (next < 0 || next > (int64_t)UINT32_MAX)
		return false;
	*line = (uint32_t)next;
	return true;
}

/* Unchecked decoders, for data validated at open. */
static uint64_t uleb64(const uint8_t **p)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static uint32_t uleb32(const uint8_t **p)
{
	uint32_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static bool section_ok(uint64_t off, uint64_t count, uint64_t elem, uint64_t size)
{
	return off % 4 == 0 && off <= size && count <= (size - off) / elem;
}

static uint32_t load32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

typedef struct scope_rec {
	uint32_t function, entry_plus1, parent_delta, file_plus1, line, column;
} scope_rec;

static bool decode_scope(const uint8_t **p, const uint8_t *end, scope_rec *r)
{
	return get_uleb32(p, end, &r->function) && get_uleb32(p, end, &r->entry_plus1) &&
	       get_uleb32(p, end, &r->parent_delta) && get_uleb32(p, end, &r->file_plus1) &&
	       get_uleb32(p, end, &r->line) && get_uleb32(p, end, &r->column);
}

static int validate_scopes(struct sym_cache *c, sym_error *err)
{
	const symc_header *h = c->h;
	/* One bit per byte of the blob marks where records start, so parent
	 * links and ranges can be checked to land on one. */
	uint8_t *starts = calloc((size_t)h->scopes_len / 8 + 1, 1);
	if (!starts)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	int rc = SYM_OK;
	const uint8_t *p = c->scopes, *end = c->scopes + h->scopes_len;
	uint32_t count = 0;
	while (p < end && rc == SYM_OK) {
		uint32_t off = (uint32_t)(p - c->scopes);
		scope_rec r;
		if (!decode_scope(&p, end, &r) || r.function >= h->nfunctions ||
		    r.file_plus1 > h->nfiles || r.parent_delta > off ||
		    (r.parent_delta &&
		     !(starts[(off - r.parent_delta) / 8] >> ((off - r.parent_delta) % 8) & 1))) {
			rc = sym_fail(err, SYM_ERR_FORMAT, "symcache: scope record at %u is invalid", off);
			break;
		}
		starts[off / 8] |= (uint8_t)(1u << (off % 8));
		count++;
	}
	if (rc == SYM_OK && count != h->nscopes)
		rc = sym_fail(err, SYM_ERR_FORMAT, "symcache: %u scope records, header says %u", count,
			  h->nscopes);
	/* Each range's scope, page chunk by page chunk (the directory is
	 * already validated). */
	for (uint32_t pg = 0; rc == SYM_OK && pg < h->npages; pg++) {
		uint32_t first = c->pages[pg].range, n = c->pages[pg + 1].range - first;
		const uint8_t *scopes = c->ranges + 6 * (size_t)first + 2 * n;
		for (uint32_t j = 0; rc == SYM_OK && j < n; j++) {
			uint32_t v = load32(scopes + 4 * j);
			if (v != SYMC_NONE &&
			    (v >= h->scopes_len || !(starts[v / 8] >> (v % 8) & 1)))
				rc = sym_fail(err, SYM_ERR_FORMAT,
					      "symcache: range %u names no scope", first + j);
		}
	}
	free(starts);
	return rc;
}

/* A line entry's head and file (symcache_format.h), applied to LINE. */
static bool check_fields(const symc_header *h, const uint8_t **p, const uint8_t *end,
			 uint32_t *line)
{
	uint64_t head;
	uint32_t file;
	return get_uleb64(p, end, &head) && apply_line_delta(head, line) &&
	       (!(head & 1) || (get_uleb32(p, end, &file) && file <= h->nfiles));
}

/* A later entry's op byte and what it implies, up to the column: DELTA
 * receives the address delta (never 0), LINE the new line. */
static bool check_op(const symc_header *h, const uint8_t **p, const uint8_t *end, uint32_t *delta,
		     uint32_t *line)
{
	if (*p >= end)
		return false;
	uint32_t op = *(*p)++;
	if (op == 0)
		return get_uleb32(p, end, delta) && *delta != 0 && check_fields(h, p, end, line);
	uint32_t cls = (op - 1) % SYMC_LINE_CLASSES;
	*delta = ((op - 1) / SYMC_LINE_CLASSES + 1) << h->line_shift;
	if (cls == SYMC_LINE_ESCAPE)
		return check_fields(h, p, end, line);
	if ((cls == 0 && *line == 0) || (cls > 1 && *line > UINT32_MAX - (cls - 1)))
		return false;
	*line = *line + cls - 1;
	return true;
}

static int validate_lines(struct sym_cache *c, sym_error *err)
{
	const symc_header *h = c->h;
	uint64_t want_blocks = ((uint64_t)h->nlines + SYMC_LINES_PER_BLOCK - 1) / SYMC_LINES_PER_BLOCK;
	if (h->nblocks != want_blocks)
		return sym_fail(err, SYM_ERR_FORMAT, "symcache: %u line blocks for %u lines",
				h->nblocks, h->nlines);
	for (uint32_t k = 0; k < h->nblocks; k++) {
		const symc_line_block *b = &c->blocks[k];
		uint32_t stop = k + 1 < h->nblocks ? c->blocks[k + 1].offset : h->lines_len;
		if (b->offset > stop || stop > h->lines_len)
			return sym_fail(err, SYM_ERR_FORMAT, "symcache: line block %u is invalid", k);
		const uint8_t *p = c->lines + b->offset, *end = c->lines + stop;
		uint64_t at = b->start;
		uint32_t n = h->nlines - k * SYMC_LINES_PER_BLOCK;
		if (n > SYMC_LINES_PER_BLOCK)
			n = SYMC_LINES_PER_BLOCK;
		uint32_t line = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t delta = 0, column;
			if ((i && !check_op(h, &p, end, &delta, &line)) ||
			    (!i && !check_fields(h, &p, end, &line)) ||
			    !get_uleb32(&p, end, &column))
				return sym_fail(err, SYM_ERR_FORMAT,
						"symcache: line entry %u of block %u is invalid", i,
						k);
			at += delta;
			if (at > UINT32_MAX)
				return sym_fail(err, SYM_ERR_FORMAT, "symcache: line block %u overflows", k);
		}
		if (p != end)
			return sym_fail(err, SYM_ERR_FORMAT,
					"symcache: line block %u has trailing bytes", k);
	}
	return SYM_OK;
}

/* The N page-relative starts of one page: inside it and increasing. */
static bool starts_ok(const uint16_t *starts, uint32_t n, uint32_t page_size)
{
	for (uint32_t i = 0; i < n; i++)
		if (starts[i] >= page_size || (i > 0 && starts[i] <= starts[i - 1]))
			return false;
	return true;
}

/* Blocks FROM..TO start in page P, in increasing order. */
static bool blocks_ok(const struct sym_cache *c, uint32_t p, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++)
		if (c->blocks[k].start >> c->h->page_shift != p ||
		    (k > from && c->blocks[k].start <= c->blocks[k - 1].start))
			return false;
	return true;
}

/*
 * The directory is what lookups trust instead of searching: each page's
 * slice [pages[p], pages[p + 1]) of the ranges and the blocks must lie in
 * the tables and hold exactly the entries starting in that page, sorted;
 * range 0 must start at 0, so every address has a range.
 */
static int validate_pages(struct sym_cache *c, sym_error *err)
{
	const symc_header *h = c->h;
	const symc_page *pg = c->pages;
	if (h->npages == 0 || h->nranges == 0 || pg[0].range != 0 || pg[0].block != 0 ||
	    pg[h->npages].range != h->nranges || pg[h->npages].block != h->nblocks ||
	    pg[1].range == 0 || *(const uint16_t *)c->ranges != 0)
		return sym_fail(err, SYM_ERR_FORMAT,
				"symcache: page directory does not span the tables");
	uint32_t page_size = 1u << h->page_shift;
	for (uint32_t p = 0; p < h->npages; p++) {
		uint32_t r0 = pg[p].range, r1 = pg[p + 1].range;
		uint32_t b0 = pg[p].block, b1 = pg[p + 1].block;
		if (r1 < r0 || r1 > h->nranges || b1 < b0 || b1 > h->nblocks ||
		    !starts_ok((const uint16_t *)(c->ranges + 6 * (size_t)r0), r1 - r0,
			       page_size) ||
		    !blocks_ok(c, p, b0, b1))
			return sym_fail(err, SYM_ERR_FORMAT,
					"symcache: page %u of the directory is invalid", p);
	}
	return SYM_OK;
}

/* The header's fields that size the directory, before any is read. */
static bool pages_fit(const symc_header *h, size_t size)
{
	return h->page_shift >= SYMC_MIN_PAGE_SHIFT && h->page_shift <= SYMC_MAX_PAGE_SHIFT &&
	       h->line_shift <= SYMC_MAX_LINE_SHIFT &&
	       h->npages <= (UINT32_MAX >> h->page_shift) + 1 &&
	       section_ok(h->pages_off, (uint64_t)h->npages + 1, sizeof(symc_page), size);
}

static int validate(struct sym_cache *c, sym_error *err)
{
	if (c->size < sizeof(symc_header))
		return sym_fail(err, SYM_ERR_FORMAT, "symcache: truncated header");
	if ((uintptr_t)c->data % 8 != 0)
		return sym_fail(err, SYM_ERR_FORMAT, "symcache: buffer not 8-byte aligned");
	const symc_header *h = (const symc_header *)c->data;
	if (memcmp(h->magic, SYMC_MAGIC, 8) != 0)
		return sym_fail(err, SYM_ERR_FORMAT, "not a symcache (bad magic)");
	if (h->version != SYM_CACHE_VERSION)
		return sym_fail(err, SYM_ERR_UNSUPPORTED, "symcache version %u, this build reads %u",
			    h->version, SYM_CACHE_VERSION);
	if (h->file_size != c->size)
		return sym_fail(err, SYM_ERR_FORMAT, "symcache: header says %llu bytes, file has %zu",
			    (unsigned long long)h->file_size, c->size);
	if (!section_ok(h->strings_off, h->strings_len, 1, c->size) ||
	    !section_ok(h->files_off, h->nfiles, 4, c->size) ||
	    !section_ok(h->functions_off, h->nfunctions, sizeof(symc_function), c->size) ||
	    !section_ok(h->scopes_off, h->scopes_len, 1, c->size) ||
	    !section_ok(h->ranges_off, h->nranges, 6, c->size) ||
	    !section_ok(h->lines_off, h->lines_len, 1, c->size) ||
	    !section_ok(h->blocks_off, h->nblocks, sizeof(symc_line_block), c->size) ||
	    !pages_fit(h, c->size))
		return sym_fail(err, SYM_ERR_FORMAT, "symcache: a section lies outside the file");
	/* One NUL at the very end makes every offset inside the table a
	 * terminated string. */
	if (h->strings_len == 0 || c->data[h->strings_off + h->strings_len - 1] != '\0')
		return sym_fail(err, SYM_ERR_FORMAT, "symcache: string table not terminated");
	c->h = h;
	c->strings = (const char *)c->data + h->strings_off;
	c->files = (const uint32_t *)(c->data + h->files_off);
	c->functions = (const symc_function *)(c->data + h->functions_off);
	c->scopes = c->data + h->scopes_off;
	c->ranges = c->data + h->ranges_off;
	c->lines = c->data + h->lines_off;
	c->blocks = (const symc_line_block *)(c->data + h->blocks_off);
	c->pages = (const symc_page *)(c->data + h->pages_off);
	for (uint32_t i = 0; i < h->nfiles; i++)
		if (c->files[i] >= h->strings_len)
			return sym_fail(err, SYM_ERR_FORMAT, "symcache: file %u names a bad string", i);
	for (uint32_t i = 0; i < h->nfunctions; i++)
		if (c->functions[i].name >= h->strings_len ||
		    c->functions[i].symbol >= h->strings_len)
			return sym_fail(err, SYM_ERR_FORMAT, "symcache: function %u names a bad string", i);
	int rc = validate_pages(c, err);
	rc = rc ? rc : validate_scopes(c, err);
	return rc ? rc : validate_lines(c, err);
}

int sym_cache_from_memory(const uint8_t *data, size_t len, sym_cache **out_cache,
			  sym_error *err)
{
	*out_cache = NULL;
	struct sym_cache *c = calloc(1, sizeof *c);
	if (!c)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
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
	const uint8_t *map = NULL;
	size_t len = 0;
	int rc = sym_map_file(path, sizeof(symc_header), "symcache", &map, &len, err);
	if (rc)
		return rc;
	rc = sym_cache_from_memory(map, len, out_cache, err);
	if (rc) {
		munmap((void *)map, len);
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
	out->scopes = h->nscopes;
	out->ranges = h->nranges;
	out->lines = h->nlines;
	out->files = h->nfiles;
	out->bytes = c->size;
}

/* How many of the N sorted values at A are <= KEY: a search within one
 * page, a cache line or two. */
static uint32_t count_le16(const uint16_t *a, uint32_t n, uint32_t key)
{
	uint32_t lo = 0;
	while (n > 0) {
		uint32_t half = n / 2;
		if (a[lo + half] <= key) {
			lo += half + 1;
			n -= half + 1;
		} else {
			n = half;
		}
	}
	return lo;
}

/* The last block starting at or before OFF in page P (npages: past the
 * directory); SYMC_NONE when OFF precedes every block. */
static uint32_t block_at(const sym_cache *c, uint32_t off, uint32_t p)
{
	const symc_header *h = c->h;
	if (p >= h->npages)
		return h->nblocks ? h->nblocks - 1 : SYMC_NONE;
	uint32_t k = c->pages[p].block, end = c->pages[p + 1].block;
	while (k < end && c->blocks[k].start <= off)
		k++;
	return k ? k - 1 : SYMC_NONE;
}

/* The line entry covering OFF in block K: file index + 1 (0 = none),
 * line, column. */
static void line_in_block(const sym_cache *c, uint32_t off, uint32_t k, uint32_t *file,
			  uint32_t *line, uint32_t *column)
{
	const symc_header *h = c->h;
	*file = *line = *column = 0;
	if (k == SYMC_NONE)
		return;
	const uint8_t *p = c->lines + c->blocks[k].offset;
	uint32_t n = h->nlines - k * SYMC_LINES_PER_BLOCK;
	if (n > SYMC_LINES_PER_BLOCK)
		n = SYMC_LINES_PER_BLOCK;
	uint32_t at = c->blocks[k].start, cur_file = 0, cur_line = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cls = SYMC_LINE_ESCAPE;
		if (i) {
			const uint8_t *save = p;
			uint32_t op = *p++, delta;
			if (op) {
				cls = (op - 1) % SYMC_LINE_CLASSES;
				delta = ((op - 1) / SYMC_LINE_CLASSES + 1) << h->line_shift;
			} else {
				delta = uleb32(&p);
			}
			if (at + delta > off) {
				p = save;
				break;
			}
			at += delta;
		}
		if (cls == SYMC_LINE_ESCAPE) {
			uint64_t head = uleb64(&p);
			apply_line_delta(head, &cur_line);
			if (head & 1)
				cur_file = uleb32(&p);
		} else {
			cur_line += cls - 1;
		}
		*file = cur_file;
		*line = cur_line;
		*column = uleb32(&p);
	}
}

/* The scope of the range covering OFF, which lies in page P: the page's
 * starts are searched, and the scope sits in the same chunk, or is the
 * last of the chunks before it (the 4 bytes before this one: range 0
 * starts at 0, so page 0 always finds its range). */
static uint32_t scope_at(const sym_cache *c, uint32_t off, uint32_t p)
{
	const symc_header *h = c->h;
	if (p >= h->npages)
		return load32(c->ranges + 6 * (size_t)h->nranges - 4);
	uint32_t first = c->pages[p].range, n = c->pages[p + 1].range - first;
	const uint8_t *chunk = c->ranges + 6 * (size_t)first;
	uint32_t j = count_le16((const uint16_t *)chunk, n, off & ((1u << h->page_shift) - 1));
	return load32(j ? chunk + 2 * n + 4 * (j - 1) : chunk - 4);
}

/* Fills OUT[0..max) from SCOPE outwards; each frame past the first shows
 * its child's call site. Returns the frame count. */
static size_t walk_scopes(const sym_cache *c, uint32_t scope, sym_frame *out, size_t max)
{
	size_t n = 0;
	for (;;) {
		const uint8_t *p = c->scopes + scope;
		uint32_t fn = uleb32(&p), entry = uleb32(&p), parent = uleb32(&p);
		const symc_function *f = &c->functions[fn];
		sym_frame *fr = &out[n++];
		fr->function = c->strings + f->name;
		fr->symbol = c->strings + f->symbol;
		fr->symbol_address = entry ? c->h->base_address + entry - 1 : 0;
		fr->inlined = parent != 0;
		if (!parent || n == max)
			return n;
		uint32_t file = uleb32(&p);
		out[n].file = file ? c->strings + c->files[file - 1] : NULL;
		out[n].line = uleb32(&p);
		out[n].column = uleb32(&p);
		scope -= parent;
	}
}

size_t sym_cache_lookup(const sym_cache *c, uint64_t addr, sym_frame *out, size_t max)
{
	const symc_header *h = c->h;
	if (addr < h->base_address || addr - h->base_address > UINT32_MAX || max == 0)
		return 0;
	uint32_t off = (uint32_t)(addr - h->base_address), page = off >> h->page_shift;
	uint32_t scope = scope_at(c, off, page);
	if (scope == SYMC_NONE)
		return 0;
	/* The scope chain and the line entry are independent: both first
	 * misses are in flight before either is decoded. */
	uint32_t block = block_at(c, off, page);
	__builtin_prefetch(c->scopes + scope);
	if (block != SYMC_NONE)
		__builtin_prefetch(c->lines + c->blocks[block].offset);
	size_t n = walk_scopes(c, scope, out, max);
	uint32_t file, line, column;
	line_in_block(c, off, block, &file, &line, &column);
	out[0].file = file ? c->strings + c->files[file - 1] : NULL;
	out[0].line = line;
	out[0].column = column;
	/* A lone nameless frame without a line says nothing: llvm-symbolizer's
	 * empty answer. The name is read last: it is another cache miss. */
	if (n == 1 && !out[0].file && !out[0].line && !out[0].function[0])
		return 0;
	return n;
}
