/*
 * method_map.c — opens method tables (method_map_format.h), answers id
 * lookups and renders names. Works on a byte buffer (our mmap or the
 * caller's). The table is untrusted (it sits in a data directory, and
 * fuzzers feed it anything), so sym_methods_from_memory checks every bound
 * once; a lookup afterwards is one load (or a binary search) with no checks.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "symbolizer/method_map.h"
#include "symbolizer/method_map_format.h"
#include "symbolizer/util.h"

_Static_assert(SYMM_VERSION == SYM_METHODS_VERSION, "one version of the table format");

struct sym_methods {
	const uint8_t *data;
	size_t size;
	bool mapped;
	const symm_header *h;
	const symm_record *direct, *records;
	const uint32_t *sparse;
	const char *strings;
};

/* The checksum: the file with its checksum field read as zero. */
static uint64_t table_checksum(const uint8_t *data, size_t len)
{
	symm_header h;
	memcpy(&h, data, sizeof h);
	h.checksum = 0;
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	XXH3_64bits_update(&st, &h, sizeof h);
	XXH3_64bits_update(&st, data + sizeof h, len - sizeof h);
	return XXH3_64bits_digest(&st);
}

/* The sections' offsets are fixed by the counts: check equality, in 64
 * bits so no count can wrap them. */
static bool layout_ok(const symm_header *h, size_t size)
{
	uint64_t sparse = (uint64_t)sizeof *h + sizeof(symm_record) * (uint64_t)h->ndirect;
	uint64_t records = sparse + 4ull * h->nsparse;
	uint64_t strings = records + sizeof(symm_record) * (uint64_t)h->nsparse;
	return h->direct_off == sizeof *h && h->sparse_off == sparse && h->records_off == records &&
	       h->strings_off == strings && strings + h->strings_len == size;
}

static bool record_ok(const symm_header *h, const symm_record *r)
{
	return (uint64_t)r->class_off + r->class_len <= h->strings_len &&
	       (uint64_t)r->name_off + r->name_len <= h->strings_len &&
	       (uint64_t)r->desc_off + r->desc_len <= h->strings_len && r->class_len && !r->pad;
}

/* Direct records are methods or all zero; sparse ids rise strictly past
 * them; the counts and the largest id agree with the header. */
static int validate_records(const struct sym_methods *m, sym_error *err)
{
	static const symm_record none;
	const symm_header *h = m->h;
	uint32_t count = 0, max_id = 0;
	for (uint32_t id = 0; id < h->ndirect; id++) {
		const symm_record *r = &m->direct[id];
		if (!memcmp(r, &none, sizeof none))
			continue;
		if (!record_ok(h, r))
			return sym_fail(err, SYM_ERR_FORMAT, "method table: record of id %u is bad",
					id);
		count++;
		max_id = id;
	}
	for (uint32_t k = 0; k < h->nsparse; k++) {
		uint32_t id = m->sparse[k];
		if (id < h->ndirect || id >= SYMM_ID_LIMIT || (k > 0 && id <= max_id) ||
		    !record_ok(h, &m->records[k]))
			return sym_fail(err, SYM_ERR_FORMAT,
					"method table: sparse record %u is bad", k);
		count++;
		max_id = id;
	}
	if (count != h->nrecords || max_id != h->max_id)
		return sym_fail(err, SYM_ERR_FORMAT,
				"method table: counts disagree with the records");
	return SYM_OK;
}

static int validate(struct sym_methods *m, sym_error *err)
{
	if (m->size < sizeof(symm_header))
		return sym_fail(err, SYM_ERR_FORMAT, "method table: truncated header");
	if ((uintptr_t)m->data % 8 != 0)
		return sym_fail(err, SYM_ERR_FORMAT, "method table: buffer not 8-byte aligned");
	const symm_header *h = (const symm_header *)m->data;
	if (memcmp(h->magic, SYMM_MAGIC, 8) != 0)
		return sym_fail(err, SYM_ERR_FORMAT, "not a method table (bad magic)");
	if (h->version != SYMM_VERSION)
		return sym_fail(err, SYM_ERR_UNSUPPORTED,
				"method table version %u, this build reads %u", h->version,
				SYMM_VERSION);
	if (h->file_size != m->size)
		return sym_fail(err, SYM_ERR_FORMAT,
				"method table: header says %llu bytes, file has %zu",
				(unsigned long long)h->file_size, m->size);
	if (h->checksum != table_checksum(m->data, m->size))
		return sym_fail(err, SYM_ERR_FORMAT, "method table: checksum mismatch");
	if (h->flags || h->pad || h->ndirect > SYMM_ID_LIMIT || h->nsparse > SYMM_ID_LIMIT ||
	    !layout_ok(h, m->size))
		return sym_fail(err, SYM_ERR_FORMAT, "method table: bad counts or section offsets");
	m->h = h;
	m->direct = (const symm_record *)(m->data + h->direct_off);
	m->sparse = (const uint32_t *)(m->data + h->sparse_off);
	m->records = (const symm_record *)(m->data + h->records_off);
	m->strings = (const char *)m->data + h->strings_off;
	return validate_records(m, err);
}

int sym_methods_from_memory(const uint8_t *data, size_t len, sym_methods **out, sym_error *err)
{
	*out = NULL;
	struct sym_methods *m = calloc(1, sizeof *m);
	if (!m)
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	m->data = data;
	m->size = len;
	int rc = validate(m, err);
	if (rc) {
		free(m);
		return rc;
	}
	*out = m;
	return SYM_OK;
}

int sym_methods_open(const char *path, sym_methods **out, sym_error *err)
{
	*out = NULL;
	const uint8_t *map = NULL;
	size_t len = 0;
	int rc = sym_map_file(path, sizeof(symm_header), "method table", &map, &len, err);
	if (rc)
		return rc;
	rc = sym_methods_from_memory(map, len, out, err);
	if (rc) {
		munmap((void *)map, len);
		return rc;
	}
	(*out)->mapped = true;
	return SYM_OK;
}

void sym_methods_close(sym_methods *m)
{
	if (!m)
		return;
	if (m->mapped)
		munmap((void *)m->data, m->size);
	free(m);
}

size_t sym_methods_count(const sym_methods *m)
{
	return m->h->nrecords;
}

/* ID's record, or NULL. */
static const symm_record *record_of(const sym_methods *m, uint32_t id)
{
	const symm_header *h = m->h;
	if (id < h->ndirect)
		return m->direct[id].class_len ? &m->direct[id] : NULL;
	size_t lo = 0, hi = h->nsparse;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->sparse[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nsparse && m->sparse[lo] == id ? &m->records[lo] : NULL;
}

bool sym_methods_lookup(const sym_methods *m, uint32_t id, sym_method *out)
{
	const symm_record *r = record_of(m, id);
	if (!r) {
		if (id != SYM_METHODS_DISPATCH_ID)
			return false;
		/* GP/MethodCollector.java writes exactly this line. */
		static const char cls[] = "android.os.Handler", name[] = "dispatchMessage",
				  desc[] = "(Landroid.os.Message;)V";
		*out = (sym_method){.id = id,
				    .access = 1,
				    .class_name = cls,
				    .class_len = sizeof cls - 1,
				    .name = name,
				    .name_len = sizeof name - 1,
				    .descriptor = desc,
				    .descriptor_len = sizeof desc - 1};
		return true;
	}
	*out = (sym_method){.id = id,
			    .access = r->access,
			    .class_name = m->strings + r->class_off,
			    .class_len = r->class_len,
			    .name = m->strings + r->name_off,
			    .name_len = r->name_len,
			    .descriptor = m->strings + r->desc_off,
			    .descriptor_len = r->desc_len};
	return true;
}

/* ---- rendering ---------------------------------------------------------- */

/* An snprintf-like sink: counts every byte, keeps what fits before the NUL.
 * CAP 0 only counts (used to check descriptors). */
typedef struct sink {
	char *buf;
	size_t cap, len;
} sink;

static void put(sink *s, const char *p, size_t n)
{
	if (s->len + 1 < s->cap) {
		size_t room = s->cap - 1 - s->len;
		memcpy(s->buf + s->len, p, n < room ? n : room);
	}
	s->len += n;
}

static size_t finish(sink *s)
{
	if (s->cap)
		s->buf[s->len < s->cap ? s->len : s->cap - 1] = '\0';
	return s->len;
}

static const char *primitive_name(char c)
{
	switch (c) {
	case 'B': return "byte";
	case 'C': return "char";
	case 'D': return "double";
	case 'F': return "float";
	case 'I': return "int";
	case 'J': return "long";
	case 'S': return "short";
	case 'Z': return "boolean";
	case 'V': return "void";
	default: return NULL;
	}
}

/* One field type at D[*I] (VOID_OK for a return type) written the Java
 * way; false when malformed. The JVM allows 255 array dimensions. */
static bool put_type(sink *s, const char *d, size_t n, size_t *i, bool void_ok)
{
	size_t dims = 0;
	while (*i < n && d[*i] == '[' && dims < 256) {
		dims++;
		(*i)++;
	}
	if (*i >= n || dims > 255)
		return false;
	char c = d[(*i)++];
	if (c == 'L') {
		const char *start = d + *i, *end = memchr(start, ';', n - *i);
		if (!end || end == start)
			return false;
		for (const char *p = start; p < end; p++)
			put(s, *p == '/' ? "." : p, 1);
		*i += (size_t)(end - start) + 1;
	} else {
		const char *name = primitive_name(c);
		if (!name || (c == 'V' && (!void_ok || dims)))
			return false;
		put(s, name, strlen(name));
	}
	for (size_t k = 0; k < dims; k++)
		put(s, "[]", 2);
	return true;
}

/* "(" parameters ")" return type: the parameters written as "(a, b)". */
static bool put_descriptor(sink *s, const char *d, size_t n)
{
	if (n == 0 || d[0] != '(')
		return false;
	size_t i = 1;
	put(s, "(", 1);
	for (bool first = true; i < n && d[i] != ')'; first = false) {
		if (!first)
			put(s, ", ", 2);
		if (!put_type(s, d, n, &i, false))
			return false;
	}
	if (i >= n)
		return false;
	put(s, ")", 1);
	i++;
	sink none = {0};
	return put_type(&none, d, n, &i, true) && i == n;
}

bool symm_descriptor_valid(const char *d, size_t len)
{
	sink none = {0};
	return put_descriptor(&none, d, len);
}

static void put_qualified(sink *s, const sym_method *m)
{
	put(s, m->class_name, m->class_len);
	put(s, ".", 1);
	put(s, m->name, m->name_len);
}

size_t sym_method_readable(const sym_method *m, char *buf, size_t cap)
{
	sink s = {buf, cap, 0};
	put_qualified(&s, m);
	if (m->descriptor_len) {
		size_t mark = s.len;
		if (!put_descriptor(&s, m->descriptor, m->descriptor_len)) {
			/* Bytes past MARK are rewritten in full: the sink only
			 * ever writes at s.len. */
			s.len = mark;
			put(&s, m->descriptor, m->descriptor_len);
		}
	}
	return finish(&s);
}

size_t sym_method_linkage(const sym_method *m, char *buf, size_t cap)
{
	sink s = {buf, cap, 0};
	put_qualified(&s, m);
	put(&s, m->descriptor, m->descriptor_len);
	return finish(&s);
}
