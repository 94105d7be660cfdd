/*
 * macho.h — internal to symbolizer/: the parsed Mach-O model that dwarf.c and
 * symcache_write.c read. Everything here was bounds-checked by macho.c:
 * section data and the symbol/string tables lie inside the slice.
 *
 * Memory: a sym_object owns its mapping (or borrows the caller's buffer) and
 * the slice/section arrays; every pointer below points into them and lives
 * as long as the object.
 */
#ifndef STALLSCOPE_SYMBOLIZER_MACHO_H
#define STALLSCOPE_SYMBOLIZER_MACHO_H

#include "symbolizer/symbolizer.h"

/* Section flags we look at (mach-o/loader.h). */
#define SYM_S_ATTR_PURE_INSTRUCTIONS 0x80000000u
#define SYM_SECTION_TYPE 0x000000ffu
#define SYM_S_ZEROFILL 0x1u
#define SYM_S_GB_ZEROFILL 0xcu
#define SYM_S_THREAD_LOCAL_ZEROFILL 0x12u

/* nlist n_type bits. */
#define SYM_N_STAB 0xe0u
#define SYM_N_TYPE 0x0eu
#define SYM_N_SECT 0x0eu

typedef struct sym_section {
	char segname[17];
	char sectname[17];
	uint64_t addr, size;
	uint32_t flags;
	/* The section's bytes, or NULL when it has none in this file (zerofill,
	 * or __TEXT in a dSYM, whose code was left out). */
	const uint8_t *data;
} sym_section;

typedef struct sym_symbol {
	const char *name; /* NOT NUL-terminated in general: use name_len */
	size_t name_len;
	uint8_t type, sect; /* n_type, n_sect (1-based, 0 = none) */
	uint16_t desc;
	uint64_t value;
} sym_symbol;

typedef struct sym_macho_slice {
	sym_slice_info info;
	const uint8_t *data; /* the slice's bytes */
	size_t size;
	bool is_64;
	sym_section *sections; /* in load-command order: n_sect - 1 indexes it */
	size_t nsections;
	const uint8_t *symtab; /* nsyms nlist(_64) entries */
	uint32_t nsyms;
	const char *strtab;
	uint32_t strsize;
} sym_macho_slice;

struct sym_object {
	const uint8_t *data;
	size_t size;
	bool mapped; /* data is our mmap */
	sym_macho_slice *slices;
	size_t nslices;
};

/* Slice I (< obj->nslices). */
const sym_macho_slice *sym_macho_slice_at(const sym_object *obj, size_t i);

/* The section SEG,SECT of S or NULL. */
const sym_section *sym_macho_find_section(const sym_macho_slice *s,
					  const char *seg, const char *sect);

/*
 * Decodes symbol I (< s->nsyms) into *out. Returns false when its name lies
 * outside the string table (the entry is then unusable, not fatal).
 */
bool sym_macho_symbol(const sym_macho_slice *s, uint32_t i, sym_symbol *out);

#endif
