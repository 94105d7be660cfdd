/*
 * method_map_convert.c — methodMapping.txt to a method table
 * (method_map_format.h). The text is fed in chunks of any size to a
 * builder that splits lines (one line of carry between chunks), parses
 * each (method_map.h says how), interns the strings and records the
 * methods by id; the table is then laid out in id order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/utf8.h"
#include "symbolizer/method_map.h"
#include "symbolizer/method_map_format.h"
#include "symbolizer/strtab.h"
#include "symbolizer/util.h"

#define CHUNK (256u << 10)

_Static_assert(SYM_METHODS_MAX_LINE <= UINT16_MAX, "field lengths are u16 in records");

/* Which ids have a record, in pages allocated on first use: every mapping
 * names the dispatch id 1048574, and a flat array up to it would cost a
 * small one (or a fuzzer's input) 4 MiB to clear and walk. */
#define PAGE_IDS 4096u
#define NPAGES	 ((SYMM_ID_LIMIT + PAGE_IDS - 1) / PAGE_IDS)

typedef struct id_page {
	uint32_t record[PAGE_IDS];	 /* record index + 1, 0 = none */
	uint64_t present[PAGE_IDS / 64]; /* the same as bits, walked in order */
} id_page;

typedef struct builder {
	id_page *pages[NPAGES];
	symm_record *records; /* in input order */
	size_t nrecords, cap;
	sym_strtab strings;
	XXH3_state_t hash;
	uint64_t text_bytes;
	char *line; /* [SYM_METHODS_MAX_LINE + 1]: a line split across chunks */
	size_t line_len;
	bool overlong; /* the carried line passed the limit: skip to its end */
	sym_methods_stats stats;
} builder;

static int builder_init(builder *b, sym_error *err)
{
	memset(b, 0, sizeof *b);
	b->line = malloc(SYM_METHODS_MAX_LINE + 1);
	if (!b->line || sym_strtab_init(&b->strings) != 0)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	XXH3_128bits_reset(&b->hash);
	return SYM_OK;
}

/* ID's record index + 1, 0 = none. */
static uint32_t record_of(const builder *b, uint32_t id)
{
	const id_page *p = b->pages[id / PAGE_IDS];
	return p ? p->record[id % PAGE_IDS] : 0;
}

/* The first id ≥ FROM with a record, or SYMM_ID_LIMIT. */
static uint32_t next_id(const builder *b, uint32_t from)
{
	while (from < SYMM_ID_LIMIT) {
		const id_page *p = b->pages[from / PAGE_IDS];
		if (!p) {
			from = (from / PAGE_IDS + 1) * PAGE_IDS;
			continue;
		}
		uint64_t bits = p->present[from % PAGE_IDS / 64] & (~0ull << (from % 64));
		if (bits)
			return (from & ~63u) + (uint32_t)__builtin_ctzll(bits);
		from = (from | 63u) + 1;
	}
	return SYMM_ID_LIMIT;
}

static void builder_free(builder *b)
{
	for (uint32_t i = 0; i < NPAGES; i++)
		free(b->pages[i]);
	free(b->records);
	free(b->line);
	sym_strtab_free(&b->strings);
}

/* Decimal digits up to SEP at *P (moved past SEP); false when there are
 * none, something else, or more than fits in 32 bits. */
static bool parse_u32(const char **p, const char *end, char sep, uint32_t *out)
{
	uint64_t v = 0;
	const char *s = *p;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
			return false;
	if (s == *p || s >= end || *s != sep)
		return false;
	*p = s + 1;
	*out = (uint32_t)v;
	return true;
}

/* Names end up in JSON and PostgreSQL text: UTF-8 without control bytes.
 * The byte after [P, END) is a line end or a NUL, so cm_utf8_len stops
 * there at the latest. */
static bool text_ok(const char *p, const char *end)
{
	while (p < end) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			p++;
			continue;
		}
		size_t n = cm_utf8_len((const unsigned char *)p);
		if (n == 0 || n > (size_t)(end - p))
			return false;
		p += n;
	}
	return true;
}

typedef struct fields {
	uint32_t id, access;
	const char *cls, *name, *desc;
	size_t cls_len, name_len, desc_len;
} fields;

/* Splits a line without its line end; false when malformed. */
static bool split_line(const char *p, size_t len, fields *f)
{
	const char *end = p + len;
	if (!parse_u32(&p, end, ',', &f->id) || !parse_u32(&p, end, ',', &f->access) ||
	    !text_ok(p, end))
		return false;
	const char *space = memchr(p, ' ', (size_t)(end - p));
	if (!space || space == p)
		return false;
	f->cls = p;
	f->cls_len = (size_t)(space - p);
	f->name = space + 1;
	f->desc = NULL;
	f->desc_len = 0;
	const char *last = memrchr(f->name, ' ', (size_t)(end - f->name));
	if (last && last + 1 < end && last[1] == '(') {
		f->desc = last + 1;
		f->desc_len = (size_t)(end - f->desc);
		end = last;
	}
	f->name_len = (size_t)(end - f->name);
	return f->name_len > 0;
}

static bool blank(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != ' ' && p[i] != '\t')
			return false;
	return true;
}

static int add_method(builder *b, const fields *f, sym_error *err)
{
	id_page **page = &b->pages[f->id / PAGE_IDS];
	if (!*page && !(*page = calloc(1, sizeof **page)))
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	if (b->nrecords == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 4096;
		symm_record *r = realloc(b->records, cap * sizeof *r);
		if (!r)
			return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
		b->records = r;
		b->cap = cap;
	}
	uint32_t cls = sym_strtab_intern(&b->strings, f->cls, f->cls_len);
	uint32_t name = sym_strtab_intern(&b->strings, f->name, f->name_len);
	uint32_t desc = f->desc_len ? sym_strtab_intern(&b->strings, f->desc, f->desc_len) : 0;
	if (cls == SYM_NO_STR || name == SYM_NO_STR || desc == SYM_NO_STR)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	if (b->strings.len > SYM_METHODS_MAX_STRINGS)
		return sym_fail(err, SYM_ERR_NOMEM, "method mapping: names pass %u MiB",
				SYM_METHODS_MAX_STRINGS >> 20);
	b->records[b->nrecords++] = (symm_record){.access = f->access,
						  .class_off = cls,
						  .name_off = name,
						  .desc_off = desc,
						  .class_len = (uint16_t)f->cls_len,
						  .name_len = (uint16_t)f->name_len,
						  .desc_len = (uint16_t)f->desc_len};
	(*page)->record[f->id % PAGE_IDS] = (uint32_t)b->nrecords;
	(*page)->present[f->id % PAGE_IDS / 64] |= 1ull << (f->id % 64);
	if (b->stats.methods++ == 0 || f->id > b->stats.max_id)
		b->stats.max_id = f->id;
	return SYM_OK;
}

/* One line without its LF. UNTERMINATED: the text's last line, which had
 * none. Returns SYM_OK whether the line was kept or skipped. */
static int add_line(builder *b, const char *p, size_t len, bool unterminated, sym_error *err)
{
	b->stats.lines++;
	if (len && p[len - 1] == '\r')
		len--;
	if (blank(p, len) || p[0] == '#')
		return SYM_OK;
	fields f;
	if (!split_line(p, len, &f) || f.id >= SYMM_ID_LIMIT || record_of(b, f.id) ||
	    (unterminated && !symm_descriptor_valid(f.desc, f.desc_len))) {
		b->stats.skipped++;
		return SYM_OK;
	}
	return add_method(b, &f, err);
}

/* Appends to the carried line; past the limit the line is only skipped. */
static void carry(builder *b, const char *p, size_t n)
{
	if (b->overlong || n > SYM_METHODS_MAX_LINE - b->line_len) {
		b->overlong = true;
		return;
	}
	memcpy(b->line + b->line_len, p, n);
	b->line_len += n;
}

/* The carried line, now whole. */
static int flush_line(builder *b, bool unterminated, sym_error *err)
{
	int rc = SYM_OK;
	if (b->overlong) {
		b->stats.lines++;
		b->stats.skipped++;
	} else {
		/* A NUL after the line bounds text_ok's UTF-8 reads. */
		b->line[b->line_len] = '\0';
		rc = add_line(b, b->line, b->line_len, unterminated, err);
	}
	b->line_len = 0;
	b->overlong = false;
	return rc;
}

static int feed(builder *b, const char *p, size_t n, sym_error *err)
{
	if ((b->text_bytes += n) > SYM_METHODS_MAX_TEXT)
		return sym_fail(err, SYM_ERR_NOMEM, "method mapping: text passes %llu MiB",
				SYM_METHODS_MAX_TEXT >> 20);
	XXH3_128bits_update(&b->hash, p, n);
	const char *end = p + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			carry(b, p, (size_t)(end - p));
			break;
		}
		int rc;
		if (b->line_len || b->overlong) {
			carry(b, p, (size_t)(nl - p));
			rc = flush_line(b, false, err);
		} else if ((size_t)(nl - p) > SYM_METHODS_MAX_LINE) {
			b->stats.lines++;
			b->stats.skipped++;
			rc = SYM_OK;
		} else {
			rc = add_line(b, p, (size_t)(nl - p), false, err);
		}
		if (rc)
			return rc;
		p = nl + 1;
	}
	return SYM_OK;
}

/* The last line without its newline, the hash; then at least one method. */
static int finish_text(builder *b, sym_error *err)
{
	int rc = b->line_len || b->overlong ? flush_line(b, true, err) : SYM_OK;
	XXH128_canonical_t c;
	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&b->hash));
	memcpy(b->stats.content_hash, c.digest, sizeof c.digest);
	if (rc == SYM_OK && b->nrecords == 0)
		rc = sym_fail(err, SYM_ERR_FORMAT,
			      "method mapping: no valid line (%zu lines, %zu skipped)",
			      b->stats.lines, b->stats.skipped);
	return rc;
}

/* ---- layout -------------------------------------------------------------- */

typedef struct table {
	symm_header h;
	symm_record *direct, *records; /* records: the sparse ids' */
	uint32_t *sparse;
} table;

/* The direct array's length: the largest id + 1 whose prefix of the id
 * space holds records for at least half of its ids. */
static uint32_t direct_length(const builder *b)
{
	uint32_t n = 0, seen = 0;
	for (uint32_t id = next_id(b, 0); id < SYMM_ID_LIMIT; id = next_id(b, id + 1))
		if ((uint64_t)++seen * 2 >= (uint64_t)id + 1)
			n = id + 1;
	return n;
}

static void fill_header(symm_header *h, const builder *b, uint32_t ndirect, uint32_t nsparse)
{
	memset(h, 0, sizeof *h);
	h->ndirect = ndirect;
	h->nsparse = nsparse;
	memcpy(h->magic, SYMM_MAGIC, 8);
	h->version = SYMM_VERSION;
	memcpy(h->content_hash, b->stats.content_hash, sizeof h->content_hash);
	h->nrecords = (uint32_t)b->nrecords;
	h->max_id = b->stats.max_id;
	h->direct_off = sizeof *h;
	h->sparse_off = h->direct_off + (uint32_t)sizeof(symm_record) * h->ndirect;
	h->records_off = h->sparse_off + 4 * h->nsparse;
	h->strings_off = h->records_off + (uint32_t)sizeof(symm_record) * h->nsparse;
	h->strings_len = (uint32_t)b->strings.len;
	h->file_size = (uint64_t)h->strings_off + h->strings_len;
}

static int lay_out(const builder *b, table *t, sym_error *err)
{
	uint32_t ndirect = direct_length(b), nsparse = (uint32_t)b->nrecords;
	for (uint32_t id = next_id(b, 0); id < ndirect; id = next_id(b, id + 1))
		nsparse--;
	t->direct = calloc((size_t)ndirect + 1, sizeof *t->direct); /* zero = no method */
	t->sparse = malloc(((size_t)nsparse + 1) * sizeof *t->sparse);
	t->records = malloc(((size_t)nsparse + 1) * sizeof *t->records);
	if (!t->direct || !t->sparse || !t->records)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	uint32_t k = 0;
	for (uint32_t id = next_id(b, 0); id < SYMM_ID_LIMIT; id = next_id(b, id + 1)) {
		const symm_record *r = &b->records[record_of(b, id) - 1];
		if (id < ndirect) {
			t->direct[id] = *r;
		} else {
			t->sparse[k] = id;
			t->records[k++] = *r;
		}
	}
	fill_header(&t->h, b, ndirect, nsparse);
	return SYM_OK;
}

static void table_free(table *t)
{
	free(t->direct);
	free(t->sparse);
	free(t->records);
}

/* The table's bytes as pieces, checksum set. */
static void table_parts(table *t, const builder *b, struct iovec parts[5])
{
	const symm_header *h = &t->h;
	parts[0] = (struct iovec){&t->h, sizeof t->h};
	parts[1] = (struct iovec){t->direct, sizeof(symm_record) * (size_t)h->ndirect};
	parts[2] = (struct iovec){t->sparse, 4ull * h->nsparse};
	parts[3] = (struct iovec){t->records, sizeof(symm_record) * (size_t)h->nsparse};
	parts[4] = (struct iovec){b->strings.blob, h->strings_len};
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	for (int i = 0; i < 5; i++)
		XXH3_64bits_update(&st, parts[i].iov_base, parts[i].iov_len);
	t->h.checksum = XXH3_64bits_digest(&st);
}

/* ---- entry points -------------------------------------------------------- */

typedef int (*emit_fn)(const struct iovec parts[5], void *cls, sym_error *err);

static int build_and_emit(builder *b, emit_fn emit, void *cls, sym_error *err)
{
	table t = {0};
	int rc = lay_out(b, &t, err);
	if (rc == SYM_OK) {
		struct iovec parts[5];
		table_parts(&t, b, parts);
		rc = emit(parts, cls, err);
	}
	table_free(&t);
	return rc;
}

/* Copies STATS out and frees the builder. */
static int done(builder *b, int rc, sym_methods_stats *stats)
{
	if (stats)
		*stats = b->stats;
	builder_free(b);
	return rc;
}

struct to_memory {
	uint8_t *buf;
	size_t len;
};

static int emit_memory(const struct iovec parts[5], void *cls, sym_error *err)
{
	struct to_memory *out = cls;
	size_t len = 0;
	for (int i = 0; i < 5; i++)
		len += parts[i].iov_len;
	if (!(out->buf = malloc(len)))
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	for (int i = 0; i < 5; i++) {
		if (parts[i].iov_len)
			memcpy(out->buf + out->len, parts[i].iov_base, parts[i].iov_len);
		out->len += parts[i].iov_len;
	}
	return SYM_OK;
}

int sym_methods_build(const char *text, size_t len, uint8_t **out_buf, size_t *out_len,
		      sym_methods_stats *stats, sym_error *err)
{
	*out_buf = NULL;
	*out_len = 0;
	builder b;
	int rc = builder_init(&b, err);
	if (rc == SYM_OK)
		rc = feed(&b, text, len, err);
	if (rc == SYM_OK)
		rc = finish_text(&b, err);
	struct to_memory out = {0};
	if (rc == SYM_OK)
		rc = build_and_emit(&b, emit_memory, &out, err);
	if (rc == SYM_OK) {
		*out_buf = out.buf;
		*out_len = out.len;
	}
	return done(&b, rc, stats);
}

static int emit_file(const struct iovec parts[5], void *cls, sym_error *err)
{
	return sym_write_atomic(cls, 0600, parts, 5, err);
}

/* The whole of IN_PATH through the builder. */
static int read_text(builder *b, const char *in_path, sym_error *err)
{
	gzFile gz = gzopen(in_path, "rb");
	if (!gz)
		return sym_fail(err, SYM_ERR_IO, "%s: %s", in_path,
				errno ? strerror(errno) : "cannot open");
	gzbuffer(gz, CHUNK);
	char *chunk = malloc(CHUNK);
	int rc = chunk ? SYM_OK : sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	int n = 0;
	while (rc == SYM_OK && (n = gzread(gz, chunk, CHUNK)) > 0)
		rc = feed(b, chunk, (size_t)n, err);
	int zerr = Z_OK;
	const char *msg = gzerror(gz, &zerr);
	if (rc == SYM_OK && (n < 0 || zerr != Z_OK))
		/* Z_BUF_ERROR here is a gzip stream cut short: an incomplete
		 * mapping, refused rather than half kept. */
		rc = sym_fail(err, zerr == Z_ERRNO ? SYM_ERR_IO : SYM_ERR_FORMAT, "%s: %s", in_path,
			      msg);
	free(chunk);
	gzclose(gz);
	return rc;
}

int sym_methods_convert(const char *in_path, const char *out_path, sym_methods_stats *stats,
			sym_error *err)
{
	builder b;
	int rc = builder_init(&b, err);
	if (rc == SYM_OK)
		rc = read_text(&b, in_path, err);
	if (rc == SYM_OK)
		rc = finish_text(&b, err);
	if (rc == SYM_OK)
		rc = build_and_emit(&b, emit_file, (void *)out_path, err);
	return done(&b, rc, stats);
}
