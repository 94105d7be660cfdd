/*
 * symtab.c — the symbol table the way llvm-symbolizer sees it: sizes from
 * llvm's computeSymbolSizes, the filters of SymbolizableObjectFile::addSymbol
 * and its one-symbol-per-address rule. See symtab.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/symtab.h"
#include "symbolizer/util.h"

typedef struct size_entry {
	uint64_t addr;
	uint32_t sect_id; /* n_sect - 1, wrapping for 0 as llvm's does */
	uint32_t sym;     /* symbol index, UINT32_MAX for a section end */
} size_entry;

static int cmp_size_entry(const void *a, const void *b)
{
	const size_entry *x = a, *y = b;
	if (x->sect_id != y->sect_id)
		return x->sect_id < y->sect_id ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_sym_tsym(const void *a, const void *b)
{
	const sym_tsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int sym_symtab_collect(const sym_macho_slice *s, sym_strtab *st, vec *out,
		       sym_error *err)
{
	size_t n = (size_t)s->nsyms + s->nsections;
	size_entry *e = calloc(n ? n : 1, sizeof *e);
	uint64_t *sizes = calloc(s->nsyms ? s->nsyms : 1, sizeof *sizes);
	if (!e || !sizes) {
		free(e);
		free(sizes);
		return sym_fail(err, SYM_ERR_NOMEM, "out of memory");
	}
	size_t k = 0;
	for (uint32_t i = 0; i < s->nsyms; i++) {
		sym_symbol sym;
		/* Even a symbol with an unreadable name takes part in sizing. */
		sym_macho_symbol(s, i, &sym);
		e[k++] = (size_entry){sym.value, (uint32_t)sym.sect - 1u, i};
	}
	for (size_t i = 0; i < s->nsections; i++)
		e[k++] = (size_entry){s->sections[i].addr + s->sections[i].size,
				      (uint32_t)i, UINT32_MAX};
	qsort(e, k, sizeof *e, cmp_size_entry);
	for (size_t i = 0; k > 0 && i < k - 1; i++) {
		if (e[i].sym == UINT32_MAX)
			continue;
		size_t next = i + 1;
		while (next < k - 1 && e[next].addr == e[i].addr)
			next++;
		sizes[e[i].sym] = e[next].addr - e[i].addr;
	}
	free(e);

	int rc = SYM_OK;
	for (uint32_t i = 0; i < s->nsyms && rc == SYM_OK; i++) {
		sym_symbol sym;
		if (!sym_macho_symbol(s, i, &sym))
			continue;
		if ((sym.type & SYM_N_STAB) || (sym.type & SYM_N_TYPE) != SYM_N_SECT ||
		    sym.sect == 0 || sym.sect > s->nsections)
			continue;
		uint32_t raw = sym_strtab_intern(st, sym.name, sym.name_len);
		sym_tsym *t = vec_push(out);
		if (raw == SYM_NO_STR || !t) {
			rc = sym_fail(err, SYM_ERR_NOMEM, "out of memory");
			break;
		}
		*t = (sym_tsym){sym.value, sizes[i], raw, i};
	}
	free(sizes);
	if (rc)
		return rc;
	sym_tsym *v = out->p;
	if (out->n)
		qsort(v, out->n, sizeof *v, cmp_sym_tsym);
	size_t u = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (i + 1 < out->n && v[i + 1].addr == v[i].addr)
			continue;
		v[u++] = v[i];
	}
	out->n = u;
	return SYM_OK;
}

const sym_tsym *sym_symtab_at(const vec *syms, uint64_t a)
{
	const sym_tsym *v = syms->p;
	size_t lo = 0, hi = syms->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const sym_tsym *t = &v[lo - 1];
	if (t->size != 0 && t->addr + t->size <= a)
		return NULL;
	return t;
}
