/* fuzz_method_map.c — libFuzzer target for Android method tables: the
 * bytes as methodMapping.txt through the converter, then every method of
 * the table built from them looked up and rendered; and the bytes as a
 * table through validation and lookups. The custom mutator reseals inputs
 * that start with the table's magic (version, size, checksum), since a
 * mutant failing those is refused before the bounds checks. */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "fuzz/fuzz_target.h"
#include "symbolizer/method_map.h"
#include "symbolizer/method_map_format.h"

/* Each rendering agrees with itself at every size and never writes past
 * what it was given. TEXT: the table comes from the converter, whose
 * names hold no NUL, so the lengths can be checked with strlen. */
static void render(const sym_method *m, bool text)
{
	char small[16];
	size_t n = sym_method_readable(m, NULL, 0);
	char *big = malloc(n + 1);
	if (!big)
		return;
	size_t cut = n < sizeof small ? n : sizeof small - 1;
	if (sym_method_readable(m, big, n + 1) != n || big[n] ||
	    sym_method_readable(m, small, sizeof small) != n || small[cut] ||
	    memcmp(small, big, cut) || (text && strlen(big) != n))
		abort();
	free(big);
	size_t k = m->class_len + 1 + m->name_len + m->descriptor_len;
	if (!(big = malloc(k + 1)))
		return;
	if (sym_method_linkage(m, big, k + 1) != k || big[k] || (text && strlen(big) != k))
		abort();
	free(big);
}

/* The low ids (all of them in a small table), the highest and the
 * dispatch id: a whole 2^20 sweep per input would slow the fuzzer down
 * a thousandfold. */
static void exercise(const sym_methods *t, uint32_t max_id, bool text)
{
	size_t found = 0;
	sym_method m;
	uint32_t sweep = max_id < 1024 ? max_id + 2 : 1024;
	for (uint32_t id = 0; id < sweep; id++)
		if (sym_methods_lookup(t, id, &m)) {
			if (m.id != id)
				abort();
			render(&m, text);
			found++;
		}
	if (max_id < 1024 && found != sym_methods_count(t))
		abort();
	if (!sym_methods_lookup(t, max_id, &m) ||
	    !sym_methods_lookup(t, SYM_METHODS_DISPATCH_ID, &m))
		abort();
	render(&m, text);
}

static void as_text(const uint8_t *data, size_t size)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	sym_methods_stats st;
	sym_error err = {{0}};
	if (sym_methods_build((const char *)data, size, &buf, &len, &st, &err) != SYM_OK) {
		if (!err.msg[0] || buf)
			abort();
		return;
	}
	sym_methods *t = NULL;
	/* What the converter writes, the reader opens. */
	if (sym_methods_from_memory(buf, len, &t, &err) != SYM_OK ||
	    sym_methods_count(t) != st.methods || st.methods + st.skipped > st.lines)
		abort();
	exercise(t, st.max_id, true);
	sym_methods_close(t);
	free(buf);
}

static void as_table(const uint8_t *data, size_t size)
{
	/* The reader wants 8-byte alignment, as an mmap gives. */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return;
	memcpy(copy, data, size);
	sym_methods *t = NULL;
	sym_error err = {{0}};
	if (sym_methods_from_memory(copy, size, &t, &err) == SYM_OK) {
		exercise(t, ((const symm_header *)copy)->max_id, false);
		sym_methods_close(t);
	} else if (!err.msg[0]) {
		abort();
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 8 && !memcmp(data, SYMM_MAGIC, 8))
		as_table(data, size);
	else
		as_text(data, size);
	return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	size = LLVMFuzzerMutate(data, size, max_size);
	if (size >= sizeof(symm_header) && !memcmp(data, SYMM_MAGIC, 8) && seed % 8 != 0) {
		symm_header h;
		memcpy(&h, data, sizeof h);
		h.version = SYMM_VERSION;
		h.file_size = size;
		h.checksum = 0;
		memcpy(data, &h, sizeof h);
		h.checksum = XXH3_64bits(data, size);
		memcpy(data, &h, sizeof h);
	}
	return size;
}
