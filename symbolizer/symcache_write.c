/*
 * symcache_write.c — writes a symcache (symcache_format.h): reads the slice
 * (dwarf.c, symtab.c), computes what every address answers (answer.c), and
 * encodes that compactly: names demangled once, strings shared (a C name
 * "foo" is the tail of its symbol "_foo"), frame nodes and line entries as
 * ULEB128 deltas.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "symbolizer/answer.h"
#include "symbolizer/symcache_format.h"
#include "symbolizer/symtab.h"
#include "symbolizer/util.h"

/* ---- byte buffer with ULEB128 ------------------------------------------- */

typedef struct bytes {
	uint8_t *p;
	size_t n, cap;
	bool failed;
} bytes;

static void put_byte(bytes *b, uint8_t v)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	b->p[b->n++] = v;
}

static void put_uleb(bytes *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		put_byte(b, (uint8_t)(byte | (v ? 0x80 : 0)));
	} while (v);
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* ---- encoder ------------------------------------------------------------- */

typedef struct encoder {
	sym_strtab *work; /* names and paths as the answer refers to them */
	sym_strtab out;   /* the strings the symcache keeps */
	vec functions;    /* symc_function */
	recset function_set;
	idmap function_of; /* (raw name << 1 | from_symtab) -> function index */
	vec files;         /* u32: out string offset */
	idmap file_of;     /* work path id -> file index */
	sym_error *err;
} encoder;

/*
 * Interns DISPLAY and SYMBOL into the output strings, sharing bytes when the
 * display name is the symbol without its Mach-O '_'.
 */
static bool intern_pair(encoder *e, const char *display, const char *symbol,
			symc_function *out)
{
	out->symbol = sym_strtab_intern(&e->out, symbol, strlen(symbol));
	if (out->symbol == SYM_NO_STR)
		return false;
	if (!strcmp(display, symbol)) {
		out->name = out->symbol;
	} else if (symbol[0] == '_' && !strcmp(display, symbol + 1)) {
		out->name = out->symbol + 1;
	} else {
		out->name = sym_strtab_intern(&e->out, display, strlen(display));
	}
	return out->name != SYM_NO_STR;
}

/* The function record of a scope's name, demangled the way llvm-symbolizer
 * shows it; SYMC_NONE when out of memory. */
static uint32_t function_of(encoder *e, uint32_t raw, bool from_symtab)
{
	uint32_t *slot;
	uint64_t key = (uint64_t)raw << 1 | from_symtab;
	if (idmap_get_or_put(&e->function_of, key, SYMC_NONE, &slot) != 0)
		return SYMC_NONE;
	if (*slot != SYMC_NONE)
		return *slot;

	const char *name = raw == SYM_NO_STR ? "" : sym_strtab_get(e->work, raw);
	bool objc = (name[0] == '-' || name[0] == '+') && name[1] == '[';
	/* llvm drops a symbol's Mach-O '_' before demangling; a DWARF name
	 * gains it to be spelled as a symbol (Objective-C methods have none). */
	const char *plain = from_symtab && name[0] == '_' ? name + 1 : name;
	const char *symbol = name;
	char *prefixed = NULL;
	if (!from_symtab && name[0] && !objc) {
		size_t len = strlen(name);
		if (!(prefixed = malloc(len + 2)))
			return SYMC_NONE;
		prefixed[0] = '_';
		memcpy(prefixed + 1, name, len + 1);
		symbol = prefixed;
	}
	char *demangled = sym_demangle(plain, SYM_DEMANGLE_SHORT);
	symc_function fn;
	bool ok = intern_pair(e, demangled ? demangled : plain, symbol, &fn);
	free(demangled);
	free(prefixed);
	if (!ok)
		return SYMC_NONE;
	uint32_t index = recset_intern(&e->function_set, &fn);
	if (index == RECSET_FAILED)
		return SYMC_NONE;
	/* The table may have grown since SLOT was found. */
	if (idmap_get_or_put(&e->function_of, key, index, &slot) != 0)
		return SYMC_NONE;
	*slot = index;
	return index;
}

/* File index + 1 of work path PATH (SYM_NO_STR → 0); SYMC_NONE on OOM. */
static uint32_t file_plus1(encoder *e, uint32_t path)
{
	if (path == SYM_NO_STR)
		return 0;
	uint32_t *slot;
	if (idmap_get_or_put(&e->file_of, path, SYMC_NONE, &slot) != 0)
		return SYMC_NONE;
	if (*slot != SYMC_NONE)
		return *slot + 1;
	const char *s = sym_strtab_get(e->work, path);
	uint32_t str = sym_strtab_intern(&e->out, s, strlen(s));
	uint32_t *f = str == SYM_NO_STR ? NULL : vec_push(&e->files);
	if (!f)
		return SYMC_NONE;
	*f = str;
	uint32_t index = (uint32_t)(e->files.n - 1);
	if (idmap_get_or_put(&e->file_of, path, index, &slot) != 0)
		return SYMC_NONE;
	*slot = index;
	return index + 1;
}

/* Scopes as ULEB128 records; OFFSETS[i] receives scope i's offset. */
static int encode_scopes(encoder *e, const sym_answer *a, bytes *out, uint32_t *offsets)
{
	for (size_t i = 0; i < a->scopes.n; i++) {
		const sym_scope *s = &AT(a->scopes, sym_scope, i);
		uint32_t fn = function_of(e, s->name, s->from_symtab != 0);
		uint32_t file = file_plus1(e, s->call_file);
		if (fn == SYMC_NONE || file == SYMC_NONE || out->n > UINT32_MAX - 64)
			return sym_fail(e->err, SYM_ERR_NOMEM, "out of memory");
		offsets[i] = (uint32_t)out->n;
		put_uleb(out, fn);
		put_uleb(out, s->entry == SYM_NONE ? 0 : (uint64_t)s->entry + 1);
		put_uleb(out, s->parent == SYM_NONE ? 0 : offsets[i] - offsets[s->parent]);
		put_uleb(out, file);
		put_uleb(out, s->call_line);
		put_uleb(out, s->call_column);
	}
	return out->failed ? sym_fail(e->err, SYM_ERR_NOMEM, "out of memory") : SYM_OK;
}

/* The address unit of line ops: 4 when every line starts on a multiple of
 * 4 (arm64 code), so one op byte covers deltas up to 204 bytes. */
static uint32_t line_shift_of(const sym_answer *a)
{
	for (size_t i = 0; i < a->lines.n; i++)
		if (AT(a->lines, sym_line_range, i).start % 4)
			return 0;
	return SYMC_MAX_LINE_SHIFT;
}

/* A later entry's op byte and, when the op does not say it all, the
 * address delta and the head (symcache_format.h). */
static void put_op(bytes *out, uint32_t delta, int64_t line_delta, uint32_t file, bool file_changed,
		   uint32_t shift)
{
	uint32_t steps = delta >> shift;
	bool stepped = steps >= 1 && steps <= SYMC_LINE_MAX_STEPS && steps << shift == delta;
	uint32_t cls = !file_changed && line_delta >= -1 && line_delta <= 2
			       ? (uint32_t)(line_delta + 1)
			       : SYMC_LINE_ESCAPE;
	if (stepped) {
		put_byte(out, (uint8_t)(1 + (steps - 1) * SYMC_LINE_CLASSES + cls));
	} else {
		put_byte(out, 0);
		put_uleb(out, delta);
		cls = SYMC_LINE_ESCAPE;
	}
	if (cls == SYMC_LINE_ESCAPE) {
		put_uleb(out, zigzag(line_delta) << 1 | file_changed);
		if (file_changed)
			put_uleb(out, file);
	}
}

static int encode_lines(encoder *e, const sym_answer *a, uint32_t shift, bytes *out, vec *blocks)
{
	uint32_t prev_start = 0, prev_line = 0, prev_file = 0;
	for (size_t i = 0; i < a->lines.n; i++) {
		const sym_line_range *l = &AT(a->lines, sym_line_range, i);
		uint32_t file = file_plus1(e, l->file);
		if (file == SYMC_NONE)
			return sym_fail(e->err, SYM_ERR_NOMEM, "out of memory");
		uint32_t line = file ? l->line : 0, column = file ? l->column : 0;
		bool file_changed = file != prev_file;
		int64_t line_delta = (int64_t)line - (int64_t)prev_line;
		if (i % SYMC_LINES_PER_BLOCK == 0) {
			symc_line_block *blk = vec_push(blocks);
			if (!blk || out->n > UINT32_MAX)
				return sym_fail(e->err, SYM_ERR_NOMEM, "out of memory");
			*blk = (symc_line_block){l->start, (uint32_t)out->n};
			file_changed = file != 0;
			line_delta = line;
			put_uleb(out, zigzag(line_delta) << 1 | file_changed);
			if (file_changed)
				put_uleb(out, file);
		} else {
			put_op(out, l->start - prev_start, line_delta, file, file_changed, shift);
		}
		put_uleb(out, column);
		prev_start = l->start;
		prev_line = line;
		prev_file = file;
	}
	return out->failed ? sym_fail(e->err, SYM_ERR_NOMEM, "out of memory") : SYM_OK;
}

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

/* The encoded sections of a symcache, before they are laid out. */
typedef struct sections {
	bytes scopes, lines;
	vec blocks;
	uint32_t *offsets; /* per scope: its offset in scopes */
	uint32_t lead;	   /* 1: a range without frames is added at 0 */
	uint32_t page_shift, npages;
	uint32_t line_shift;
} sections;

/* Range I of the file: the answer's, after the lead one if any. */
static sym_scope_range range_at(const sym_answer *a, const sections *sec, size_t i)
{
	if (i < sec->lead)
		return (sym_scope_range){0, SYM_NONE};
	return AT(a->ranges, sym_scope_range, i - sec->lead);
}

/*
 * Range 0 must start at 0; the pages are the largest holding at most
 * SYMC_RANGES_PER_PAGE ranges on average over the addresses that have
 * ranges or lines, and the directory stops at the last such page.
 */
static void size_pages(const sym_answer *a, sections *sec)
{
	sec->lead = a->ranges.n == 0 || AT(a->ranges, sym_scope_range, 0).start != 0;
	size_t nr = a->ranges.n + sec->lead;
	uint64_t last = range_at(a, sec, nr - 1).start;
	if (sec->blocks.n) {
		uint32_t b = ((const symc_line_block *)sec->blocks.p)[sec->blocks.n - 1].start;
		last = b > last ? b : last;
	}
	uint32_t shift = SYMC_MAX_PAGE_SHIFT;
	while (shift > SYMC_MIN_PAGE_SHIFT &&
	       ((uint64_t)nr << shift) > SYMC_RANGES_PER_PAGE * (last + 1))
		shift--;
	sec->page_shift = shift;
	sec->npages = (uint32_t)(last >> shift) + 1;
}

/* The header's section offsets and sizes, each section 8-byte aligned;
 * returns the file's size. */
static size_t layout(const encoder *e, const sym_answer *a, const sections *sec, symc_header *h)
{
	size_t nr = a->ranges.n + sec->lead, nfn = e->functions.n, nfiles = e->files.n;
	size_t off = sizeof(symc_header);
	h->strings_off = (uint32_t)off;
	h->strings_len = (uint32_t)e->out.len;
	off = align8(off + e->out.len);
	h->files_off = (uint32_t)off;
	h->nfiles = (uint32_t)nfiles;
	off = align8(off + nfiles * 4);
	h->functions_off = (uint32_t)off;
	h->nfunctions = (uint32_t)nfn;
	off = align8(off + nfn * sizeof(symc_function));
	h->scopes_off = (uint32_t)off;
	h->scopes_len = (uint32_t)sec->scopes.n;
	h->nscopes = (uint32_t)a->scopes.n;
	off = align8(off + sec->scopes.n);
	h->ranges_off = (uint32_t)off;
	h->nranges = (uint32_t)nr;
	off = align8(off + nr * 6);
	h->lines_off = (uint32_t)off;
	h->lines_len = (uint32_t)sec->lines.n;
	h->nlines = (uint32_t)a->lines.n;
	off = align8(off + sec->lines.n);
	h->blocks_off = (uint32_t)off;
	h->nblocks = (uint32_t)sec->blocks.n;
	off = align8(off + sec->blocks.n * sizeof(symc_line_block));
	h->pages_off = (uint32_t)off;
	h->npages = sec->npages;
	h->page_shift = sec->page_shift;
	h->line_shift = sec->line_shift;
	off = align8(off + ((size_t)sec->npages + 1) * sizeof(symc_page));
	h->file_size = off;
	return off;
}

/* Which object the symcache describes. */
static void identify(symc_header *h, const sym_slice_info *si, uint64_t base, bool has_dwarf)
{
	memcpy(h->magic, SYMC_MAGIC, 8);
	h->version = SYM_CACHE_VERSION;
	h->flags = (has_dwarf ? SYMC_FLAG_HAS_DWARF : 0) | (si->has_uuid ? SYMC_FLAG_HAS_UUID : 0);
	h->cputype = si->cputype;
	h->cpusubtype = si->cpusubtype;
	memcpy(h->uuid, si->uuid, 16);
	h->base_address = base;
	h->text_size = si->text_vmsize;
}

/* Page p's entry: the first range and block starting at or after it. */
static void write_pages(uint8_t *buf, const symc_header *h, const sym_answer *a,
			const sections *sec)
{
	symc_page *pages = (symc_page *)(buf + h->pages_off);
	const symc_line_block *blocks = sec->blocks.p;
	uint32_t r = 0, b = 0;
	for (uint32_t p = 0; p <= h->npages; p++) {
		uint64_t base = (uint64_t)p << h->page_shift;
		while (r < h->nranges && range_at(a, sec, r).start < base)
			r++;
		while (b < h->nblocks && blocks[b].start < base)
			b++;
		pages[p] = (symc_page){r, b};
	}
}

/* The ranges, page by page (the directory written): each page's u16
 * starts, then its u32 scopes, so a lookup finds a scope in the cache line
 * it searched. */
static void write_ranges(uint8_t *buf, const symc_header *h, const sym_answer *a,
			 const sections *sec)
{
	const symc_page *pages = (const symc_page *)(buf + h->pages_off);
	uint32_t mask = (1u << h->page_shift) - 1;
	for (uint32_t p = 0; p < h->npages; p++) {
		uint32_t first = pages[p].range, n = pages[p + 1].range - first;
		uint8_t *chunk = buf + h->ranges_off + 6 * (size_t)first;
		for (uint32_t j = 0; j < n; j++) {
			sym_scope_range r = range_at(a, sec, first + j);
			uint16_t start = (uint16_t)(r.start & mask);
			uint32_t scope = r.scope == SYM_NONE ? SYMC_NONE : sec->offsets[r.scope];
			memcpy(chunk + 2 * j, &start, 2);
			memcpy(chunk + 2 * n + 4 * j, &scope, 4);
		}
	}
}

/* The header and every section into BUF, where the header places them. */
static void write_sections(uint8_t *buf, const symc_header *h, const encoder *e,
			   const sym_answer *a, const sections *sec)
{
	memcpy(buf, h, sizeof *h);
	memcpy(buf + h->strings_off, e->out.blob, e->out.len);
	if (h->nfiles)
		memcpy(buf + h->files_off, e->files.p, (size_t)h->nfiles * 4);
	if (h->nfunctions)
		memcpy(buf + h->functions_off, e->functions.p,
		       h->nfunctions * sizeof(symc_function));
	if (sec->scopes.n)
		memcpy(buf + h->scopes_off, sec->scopes.p, sec->scopes.n);
	write_pages(buf, h, a, sec);
	write_ranges(buf, h, a, sec);
	if (sec->lines.n)
		memcpy(buf + h->lines_off, sec->lines.p, sec->lines.n);
	if (sec->blocks.n)
		memcpy(buf + h->blocks_off, sec->blocks.p, sec->blocks.n * sizeof(symc_line_block));
}

static void count_stats(const symc_header *h, const sym_answer *a, sym_cache_stats *stats)
{
	uint32_t inl = 0;
	for (size_t i = 0; i < a->scopes.n; i++)
		inl += AT(a->scopes, sym_scope, i).parent != SYM_NONE;
	stats->functions = h->nfunctions;
	stats->ranges = (uint32_t)(a->ranges.n + a->lines.n);
	stats->files = h->nfiles;
	stats->inline_records = inl;
	stats->bytes = h->file_size;
}

static int assemble(encoder *e, const sym_answer *a, const sym_slice_info *si, uint64_t base,
		    bool has_dwarf, uint8_t **out_buf, size_t *out_len, sym_cache_stats *stats)
{
	sections sec = {.blocks = VEC(symc_line_block)};
	sec.offsets = malloc((a->scopes.n ? a->scopes.n : 1) * sizeof *sec.offsets);
	int rc = sec.offsets ? SYM_OK : sym_fail(e->err, SYM_ERR_NOMEM, "out of memory");
	if (rc == SYM_OK)
		rc = encode_scopes(e, a, &sec.scopes, sec.offsets);
	sec.line_shift = line_shift_of(a);
	if (rc == SYM_OK)
		rc = encode_lines(e, a, sec.line_shift, &sec.lines, &sec.blocks);
	if (rc == SYM_OK)
		size_pages(a, &sec);
	symc_header h;
	memset(&h, 0, sizeof h);
	size_t size = layout(e, a, &sec, &h);
	if (rc == SYM_OK && size > UINT32_MAX)
		rc = sym_fail(e->err, SYM_ERR_NOMEM, "symcache would exceed 4 GiB");
	uint8_t *buf = rc == SYM_OK ? calloc(1, size) : NULL;
	if (rc == SYM_OK && !buf)
		rc = sym_fail(e->err, SYM_ERR_NOMEM, "out of memory");
	if (rc == SYM_OK) {
		identify(&h, si, base, has_dwarf);
		write_sections(buf, &h, e, a, &sec);
		if (stats)
			count_stats(&h, a, stats);
		*out_buf = buf;
		*out_len = size;
	}
	free(sec.offsets);
	free(sec.scopes.p);
	free(sec.lines.p);
	free(sec.blocks.p);
	return rc;
}

int sym_cache_build(const sym_object *obj, size_t i, uint8_t **out_buf,
		    size_t *out_len, sym_cache_stats *stats, sym_error *err)
{
	return sym_cache_build_split(obj, i, NULL, 0, out_buf, out_len, stats, err);
}

int sym_cache_build_split(const sym_object *obj, size_t i, const sym_object *dwarf_obj,
			  size_t j, uint8_t **out_buf, size_t *out_len,
			  sym_cache_stats *stats, sym_error *err)
{
	*out_buf = NULL;
	*out_len = 0;
	if (i >= sym_object_slice_count(obj) ||
	    (dwarf_obj && j >= sym_object_slice_count(dwarf_obj)))
		return sym_fail(err, SYM_ERR_NOT_FOUND, "no such slice");
	const sym_macho_slice *slice = sym_macho_slice_at(obj, i);
	const sym_macho_slice *dwarf_slice = dwarf_obj ? sym_macho_slice_at(dwarf_obj, j) : slice;
	uint64_t base = slice->info.text_vmaddr;

	sym_strtab work;
	if (sym_strtab_init(&work) != 0)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	sym_debuginfo di;
	vec syms = VEC(sym_tsym);
	sym_answer answer;
	memset(&answer, 0, sizeof answer);
	int rc = sym_dwarf_load(dwarf_slice, &work, &di, err);
	if (rc == SYM_OK) {
		rc = sym_symtab_collect(slice, &work, &syms, err);
		if (rc == SYM_OK)
			rc = sym_answer_build(&di, &syms, base, &answer, err);
		sym_debuginfo_free(&di);
	}
	free(syms.p);
	if (rc == SYM_OK) {
		encoder e;
		memset(&e, 0, sizeof e);
		e.work = &work;
		e.err = err;
		e.functions = VEC(symc_function);
		e.function_set.records = &e.functions;
		e.files = VEC(uint32_t);
		if (sym_strtab_init(&e.out) != 0) {
			rc = sym_fail(err, SYM_ERR_NOMEM, "out of memory");
		} else {
			rc = assemble(&e, &answer, &slice->info, base,
				      dwarf_slice->info.has_dwarf, out_buf, out_len, stats);
			sym_strtab_free(&e.out);
		}
		free(e.functions.p);
		free(e.function_set.slots);
		idmap_free(&e.function_of);
		free(e.files.p);
		idmap_free(&e.file_of);
	}
	sym_answer_free(&answer);
	sym_strtab_free(&work);
	return rc;
}

int sym_cache_write(const sym_object *obj, size_t i, const char *path,
		    mode_t mode, sym_cache_stats *stats, sym_error *err)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = sym_cache_build(obj, i, &buf, &len, stats, err);
	if (rc)
		return rc;
	struct iovec part = {.iov_base = buf, .iov_len = len};
	rc = sym_write_atomic(path, mode, &part, 1, err);
	free(buf);
	return rc;
}
