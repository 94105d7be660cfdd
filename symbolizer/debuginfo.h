/*
 * debuginfo.h — internal to symbolizer/: what dwarf.c extracts from one
 * slice's DWARF, in plain arrays, for symcache_write.c to turn into lookup
 * ranges. Nothing here is a libdwarf type.
 *
 * The model keeps exactly what llvm-symbolizer's rules need (see
 * docs/SYMBOLIZATION.md): per compile unit its address ranges, its line
 * sequences with rows (file names already resolved to full paths), and its
 * subprogram / inlined-subroutine DIEs in depth-first pre-order with their
 * ranges, names (still mangled) and call sites.
 *
 * Memory: sym_debuginfo owns every array; strings are ids in the caller's
 * sym_strtab, which must outlive it. sym_debuginfo_free releases the arrays.
 */
#ifndef STALLSCOPE_SYMBOLIZER_DEBUGINFO_H
#define STALLSCOPE_SYMBOLIZER_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer/macho.h"
#include "symbolizer/strtab.h"

#define SYM_NONE UINT32_MAX

typedef struct sym_range {
	uint64_t lo, hi; /* [lo, hi) */
} sym_range;

typedef struct sym_di_row {
	uint64_t addr;
	uint32_t file;   /* full path string id; SYM_NO_STR when invalid */
	uint32_t line;
	uint32_t column;
} sym_di_row;

/* One line-table sequence: rows[first .. first+nrows), the last being the
 * end_sequence row whose address is hi. */
typedef struct sym_di_seq {
	uint64_t lo, hi;
	uint32_t first_row, nrows;
} sym_di_seq;

/* A DW_TAG_subprogram or DW_TAG_inlined_subroutine. */
typedef struct sym_di_sub {
	uint32_t parent;      /* enclosing sub for the inline chain, SYM_NONE
			       * when this is a subprogram or has none */
	uint32_t name;        /* raw (mangled) name per llvm's rules, or
			       * SYM_NO_STR */
	uint32_t call_file;   /* full path string id, or SYM_NO_STR */
	uint32_t call_line, call_column;
	uint64_t low_pc;
	bool has_low_pc;
	bool inlined;
	uint32_t first_range, nranges; /* into sym_debuginfo.ranges */
} sym_di_sub;

typedef struct sym_di_cu {
	uint64_t offset;                /* unit header offset in __debug_info */
	uint32_t first_range, nranges;  /* the unit DIE's own ranges */
	uint32_t first_seq, nseqs;
	uint32_t first_sub, nsubs;      /* depth-first pre-order */
} sym_di_cu;

/* A .debug_aranges entry. */
typedef struct sym_di_arange {
	uint64_t lo, hi;
	uint64_t cu_offset;
} sym_di_arange;

typedef struct sym_debuginfo {
	sym_di_cu *cus;
	size_t ncus;
	sym_di_sub *subs;
	size_t nsubs;
	sym_range *ranges;
	size_t nranges;
	sym_di_row *rows;
	size_t nrows;
	sym_di_seq *seqs;
	size_t nseqs;
	sym_di_arange *aranges;
	size_t naranges;
	/* Unit offsets that .debug_aranges described (sorted, unique): those
	 * units' own DIE ranges are not consulted (llvm's rule). */
	uint64_t *arange_cus;
	size_t narange_cus;
	size_t skipped_units; /* units libdwarf could not read */
} sym_debuginfo;

/*
 * Reads the DWARF of slice S into *DI (zeroed first), interning strings in
 * STRINGS. A slice without DWARF yields an empty model and SYM_OK. Returns
 * a negative sym code with ERR filled when the DWARF cannot be read at all;
 * individual unreadable units are skipped and counted. Units are converted
 * on sym_cache_set_threads' threads (symbolizer.h), each with its own
 * libdwarf session, and merged so that *DI and the ids in STRINGS are the
 * same whatever their number. Safe from any thread; calls run one at a
 * time (libdwarf's allocation tracking is one flag for the process, see
 * dwarf.c).
 */
int sym_dwarf_load(const sym_macho_slice *s, sym_strtab *strings,
		   sym_debuginfo *di, sym_error *err);

void sym_debuginfo_free(sym_debuginfo *di);

#endif
