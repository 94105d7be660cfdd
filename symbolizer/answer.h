/*
 * answer.h — internal to symbolizer/: what llvm-symbolizer would answer for
 * every address of a slice, as two piecewise-constant maps.
 *
 *   scope ranges: address → the frame chain (innermost function, then the
 *                 functions it was inlined into, each with its call site);
 *   line ranges:  address → file, line and column of the innermost frame.
 *
 * Both are computed from four lookups (owning compile unit, innermost
 * subroutine DIE, line row, preceding symbol), each piecewise constant, by
 * evaluating them once per elementary interval between their boundaries
 * (answer.c; the rules are spelled out in docs/SYMBOLIZATION.md).
 *
 * Memory: sym_answer owns its arrays (sym_answer_free); names and files are
 * ids in the caller's string table.
 */
#ifndef STALLSCOPE_SYMBOLIZER_ANSWER_H
#define STALLSCOPE_SYMBOLIZER_ANSWER_H

#include "symbolizer/debuginfo.h"
#include "symbolizer/vec.h"

/* One frame node. The chain of a range is its scope and its parents. */
typedef struct sym_scope {
	uint32_t name;        /* raw name id (mangled), SYM_NO_STR for none */
	uint32_t from_symtab; /* 1: name is a Mach-O symbol ('_' included) */
	uint32_t entry;       /* start address, offset from the base; SYM_NONE */
	uint32_t parent;      /* scope index, SYM_NONE for the outermost */
	uint32_t call_file;   /* where this frame was inlined into its parent:
			       * shown on the parent frame; SYM_NO_STR */
	uint32_t call_line, call_column;
} sym_scope;

typedef struct sym_scope_range {
	uint32_t start; /* offset from the base; runs to the next start */
	uint32_t scope; /* SYM_NONE: no frames */
} sym_scope_range;

typedef struct sym_line_range {
	uint32_t start;
	uint32_t file; /* path id, SYM_NO_STR: no line information */
	uint32_t line, column;
} sym_line_range;

typedef struct sym_answer {
	vec scopes;   /* sym_scope; a parent always precedes its children */
	vec ranges;   /* sym_scope_range, strictly increasing starts */
	vec lines;    /* sym_line_range, strictly increasing starts */
} sym_answer;

/*
 * Computes the answer for addresses [BASE, BASE + 2^32) from DI (the DWARF)
 * and SYMS (sym_symtab_collect's output). Returns SYM_OK or SYM_ERR_NOMEM.
 */
int sym_answer_build(const sym_debuginfo *di, const vec *syms, uint64_t base,
		     sym_answer *out, sym_error *err);

void sym_answer_free(sym_answer *a);

#endif
