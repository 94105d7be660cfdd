/*
 * symtab.h — internal to symbolizer/: the Mach-O symbol table as
 * llvm-symbolizer consults it for function names (docs/SYMBOLIZATION.md).
 *
 * Memory: the vec of sym_tsym belongs to the caller (free its .p); names
 * are ids in the caller's string table.
 */
#ifndef STALLSCOPE_SYMBOLIZER_SYMTAB_H
#define STALLSCOPE_SYMBOLIZER_SYMTAB_H

#include "symbolizer/macho.h"
#include "symbolizer/strtab.h"
#include "symbolizer/vec.h"

typedef struct sym_tsym {
	uint64_t addr, size; /* size 0: reaches up to the next symbol and past
			      * the last one */
	uint32_t raw;        /* the Mach-O name, leading '_' included */
	uint32_t order;      /* position in the nlist table */
} sym_tsym;

/*
 * Fills OUT (a VEC(sym_tsym)) with the function and data symbols of S, with
 * llvm's sizes (the gap to the next symbol or section end in the same
 * section, over every nlist entry including debug ones), sorted by address,
 * one per address (the last of the largest size).
 */
int sym_symtab_collect(const sym_macho_slice *s, sym_strtab *st, vec *out,
		       sym_error *err);

/* llvm's getNameFromSymbolTable: the symbol at or before A if it covers A;
 * NULL otherwise. */
const sym_tsym *sym_symtab_at(const vec *syms, uint64_t a);

#endif
