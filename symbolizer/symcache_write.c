/*
 * symcache_write.c — turns one slice (its DWARF model from dwarf.c and its
 * symbol table) into a symcache (symcache_format.h).
 *
 * The answer llvm-symbolizer gives for an address is a function of four
 * lookups: which compile unit owns the address (.debug_aranges, else the
 * units' own ranges), which subroutine DIE is innermost there (llvm's
 * AddrDieMap), which line row covers it, and which symbol precedes it. Each
 * is piecewise constant, so we collect every boundary of every one of them,
 * evaluate the four lookups once per elementary interval, build the frame
 * chain, and store intervals whose chains are equal as one range. A lookup
 * is then a binary search plus a walk up the chain, with nothing computed.
 * docs/SYMBOLIZATION.md states the rules one by one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/debuginfo.h"
#include "symbolizer/demangle.h"
#include "symbolizer/symcache_format.h"

#define ADDR_SPAN (UINT64_C(1) << 32) /* what u32 offsets can address */

static int fail(sym_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(sym_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* Growable array of ELEM-sized items. */
typedef struct vec {
	void *p;
	size_t n, cap, elem;
} vec;

static void *vec_push(vec *v)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 256;
		if (ncap > SIZE_MAX / v->elem)
			return NULL;
		void *np = realloc(v->p, ncap * v->elem);
		if (!np)
			return NULL;
		v->p = np;
		v->cap = ncap;
	}
	return (char *)v->p + v->n++ * v->elem;
}

#define VEC(type) ((vec){NULL, 0, 0, sizeof(type)})
#define AT(v, type, i) (((type *)(v).p)[i])

/* ---- deduplicating record sets ------------------------------------------- */

/* Open addressing over indices into a vec of fixed-size records. */
typedef struct recset {
	vec *records;
	uint32_t *slots; /* index + 1, 0 = empty */
	size_t nslots;
} recset;

static uint64_t hash_words(const uint32_t *w, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	return h;
}

static int recset_grow(recset *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 4096;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return -1;
	size_t words = s->records->elem / 4;
	for (size_t i = 0; i < s->nslots; i++) {
		if (!s->slots[i])
			continue;
		const uint32_t *rec = (const uint32_t *)((char *)s->records->p +
							 (size_t)(s->slots[i] - 1) * s->records->elem);
		size_t h = (size_t)hash_words(rec, words) & (n - 1);
		while (slots[h])
			h = (h + 1) & (n - 1);
		slots[h] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
	return 0;
}

/* The index of a record equal to REC, appending it if new; SYMC_NONE on
 * allocation failure. */
static uint32_t recset_intern(recset *s, const void *rec)
{
	if ((s->records->n + 1) * 2 > s->nslots && recset_grow(s) != 0)
		return SYMC_NONE;
	size_t words = s->records->elem / 4;
	size_t mask = s->nslots - 1;
	size_t h = (size_t)hash_words(rec, words) & mask;
	for (; s->slots[h]; h = (h + 1) & mask) {
		const void *cand = (char *)s->records->p +
				   (size_t)(s->slots[h] - 1) * s->records->elem;
		if (!memcmp(cand, rec, s->records->elem))
			return s->slots[h] - 1;
	}
	if (s->records->n >= SYMC_NONE - 1)
		return SYMC_NONE;
	void *slot = vec_push(s->records);
	if (!slot)
		return SYMC_NONE;
	memcpy(slot, rec, s->records->elem);
	s->slots[h] = (uint32_t)s->records->n;
	return (uint32_t)(s->records->n - 1);
}

/* ---- symbol table ---------------------------------------------------------- */

typedef struct tsym {
	uint64_t addr, size;
	uint32_t raw;   /* Mach-O name, with its leading '_' */
	uint32_t order; /* position in the symbol table, for stable sorting */
} tsym;

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

static int cmp_tsym(const void *a, const void *b)
{
	const tsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The symbols llvm-symbolizer consults, with llvm's sizes (the gap to the
 * next symbol or section end in the same section, computed over every
 * nlist entry, debug ones included), sorted by address with one symbol per
 * address (the last of the largest size).
 */
static int collect_symbols(const sym_macho_slice *s, sym_strtab *st, vec *out,
			   sym_error *err)
{
	size_t n = (size_t)s->nsyms + s->nsections;
	size_entry *e = calloc(n ? n : 1, sizeof *e);
	uint64_t *sizes = calloc(s->nsyms ? s->nsyms : 1, sizeof *sizes);
	if (!e || !sizes) {
		free(e);
		free(sizes);
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	}
	size_t k = 0;
	for (uint32_t i = 0; i < s->nsyms; i++) {
		sym_symbol sym;
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
		tsym *t = vec_push(out);
		if (raw == SYM_NO_STR || !t) {
			rc = fail(err, SYM_ERR_NOMEM, "out of memory");
			break;
		}
		*t = (tsym){sym.value, sizes[i], raw, i};
	}
	free(sizes);
	if (rc)
		return rc;
	tsym *v = out->p;
	qsort(v, out->n, sizeof *v, cmp_tsym);
	size_t u = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (i + 1 < out->n && v[i + 1].addr == v[i].addr)
			continue;
		v[u++] = v[i];
	}
	out->n = u;
	return SYM_OK;
}

/* llvm's getNameFromSymbolTable: the symbol at or before A, if it covers A. */
static const tsym *symbol_at(const vec *syms, uint64_t a)
{
	const tsym *v = syms->p;
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
	const tsym *t = &v[lo - 1];
	if (t->size != 0 && t->addr + t->size <= a)
		return NULL;
	return t;
}

/* ---- generic interval maps -------------------------------------------------- */

typedef struct ival {
	uint64_t lo, hi;
	uint32_t value;
} ival;

/* The value of the interval covering A in sorted disjoint V[0..n), or
 * SYM_NONE. */
static uint32_t ival_at(const ival *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= v[lo - 1].hi)
		return SYM_NONE;
	return v[lo - 1].value;
}

/* ---- compile unit map (llvm's DWARFDebugAranges::construct) ------------------ */

typedef struct endpoint {
	uint64_t addr;
	uint32_t cu;   /* index into di->cus, or ncus + k for unknown offsets */
	bool start;
} endpoint;

static int cmp_endpoint(const void *a, const void *b)
{
	const endpoint *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static uint32_t cu_index_of(const sym_debuginfo *di, uint64_t offset)
{
	size_t lo = 0, hi = di->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (di->cus[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < di->ncus && di->cus[lo].offset == offset ? (uint32_t)lo : SYM_NONE;
}

static bool in_sorted(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] == x;
}

/* Fenwick tree over N ids (1-based inside). */
static void bit_add(uint32_t *bit, size_t n, uint32_t id, int delta)
{
	for (size_t i = (size_t)id + 1; i <= n; i += i & (~i + 1))
		bit[i] = (uint32_t)((int64_t)bit[i] + delta);
}

/* The lowest id whose presence is 1; N when none. */
static uint32_t bit_first(const uint32_t *bit, size_t n)
{
	size_t pos = 0, step = 1;
	while (step * 2 <= n)
		step *= 2;
	for (; step; step /= 2)
		if (pos + step <= n && bit[pos + step] == 0)
			pos += step;
	return (uint32_t)pos;
}

/*
 * Owner intervals: where several units claim an address, llvm picks the
 * one with the lowest offset (the multiset's first), extending the previous
 * interval while its unit stays valid. Offsets named by .debug_aranges that
 * match no unit own their addresses too (and so hide them), as in llvm.
 */
static int build_cu_map(const sym_debuginfo *di, vec *out, sym_error *err)
{
	vec eps = VEC(endpoint);
	int rc = SYM_OK;
	/* Unknown aranges offsets get ids past ncus, ordered by offset. */
	for (size_t i = 0; i < di->naranges && rc == SYM_OK; i++) {
		const sym_di_arange *a = &di->aranges[i];
		if (a->lo >= a->hi)
			continue;
		uint32_t cu = cu_index_of(di, a->cu_offset);
		if (cu == SYM_NONE)
			cu = (uint32_t)di->ncus; /* "owned by nobody we know" */
		endpoint *s = vec_push(&eps), *e = s ? vec_push(&eps) : NULL;
		if (!e) {
			rc = fail(err, SYM_ERR_NOMEM, "out of memory");
			break;
		}
		*s = (endpoint){a->lo, cu, true};
		*e = (endpoint){a->hi, cu, false};
	}
	for (size_t i = 0; i < di->ncus && rc == SYM_OK; i++) {
		const sym_di_cu *cu = &di->cus[i];
		if (in_sorted(di->arange_cus, di->narange_cus, cu->offset))
			continue;
		for (uint32_t r = 0; r < cu->nranges; r++) {
			const sym_range *rg = &di->ranges[cu->first_range + r];
			if (rg->lo >= rg->hi)
				continue;
			endpoint *s = vec_push(&eps), *e = s ? vec_push(&eps) : NULL;
			if (!e) {
				rc = fail(err, SYM_ERR_NOMEM, "out of memory");
				break;
			}
			*s = (endpoint){rg->lo, (uint32_t)i, true};
			*e = (endpoint){rg->hi, (uint32_t)i, false};
		}
	}
	if (rc) {
		free(eps.p);
		return rc;
	}
	endpoint *ep = eps.p;
	qsort(ep, eps.n, sizeof *ep, cmp_endpoint);
	/* The valid multiset: a count per unit id, and a Fenwick tree over
	 * "count > 0" to find the lowest valid id in O(log n). */
	size_t nids = di->ncus + 1;
	uint32_t *count = calloc(nids, sizeof *count);
	uint32_t *bit = calloc(nids + 1, sizeof *bit);
	if (!count || !bit) {
		free(count);
		free(bit);
		free(eps.p);
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	}
	size_t valid = 0;
	uint64_t prev = UINT64_MAX;
	for (size_t i = 0; i < eps.n && rc == SYM_OK; i++) {
		if (prev < ep[i].addr && valid > 0) {
			uint32_t first = bit_first(bit, nids);
			ival *last = out->n ? &AT(*out, ival, out->n - 1) : NULL;
			if (last && last->hi == prev && count[last->value] > 0) {
				last->hi = ep[i].addr;
			} else {
				ival *iv = vec_push(out);
				if (!iv)
					rc = fail(err, SYM_ERR_NOMEM, "out of memory");
				else
					*iv = (ival){prev, ep[i].addr, first};
			}
		}
		if (ep[i].start) {
			if (count[ep[i].cu]++ == 0)
				bit_add(bit, nids, ep[i].cu, 1);
			valid++;
		} else if (count[ep[i].cu] > 0) {
			if (--count[ep[i].cu] == 0)
				bit_add(bit, nids, ep[i].cu, -1);
			valid--;
		}
		prev = ep[i].addr;
	}
	free(count);
	free(bit);
	free(eps.p);
	/* Intervals owned by the unknown id resolve to no unit. */
	for (size_t i = 0; i < out->n; i++)
		if (AT(*out, ival, i).value >= di->ncus)
			AT(*out, ival, i).value = SYM_NONE;
	return rc;
}

/* ---- per-unit DIE map (llvm's DWARFUnit::updateAddressDieMap) ---------------- */

/* A treap standing in for llvm's std::map<lo, (hi, die)>. */
typedef struct tnode {
	uint64_t key, end;
	uint32_t die, prio;
	int32_t l, r;
} tnode;

typedef struct treap {
	vec nodes;
	int32_t root;
	uint32_t rng;
} treap;

static uint32_t next_prio(treap *t)
{
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 17;
	t->rng ^= t->rng << 5;
	return t->rng;
}

#define TN(t, i) AT((t)->nodes, tnode, i)

/* Greatest key <= X, or -1. */
static int32_t treap_le(treap *t, uint64_t x)
{
	int32_t cur = t->root, best = -1;
	while (cur >= 0) {
		if (TN(t, cur).key <= x) {
			best = cur;
			cur = TN(t, cur).r;
		} else {
			cur = TN(t, cur).l;
		}
	}
	return best;
}

/* Splits CUR into keys < KEY (*l) and keys > KEY (*r); KEY is absent. */
static void treap_split(treap *t, int32_t cur, uint64_t key, int32_t *l, int32_t *r)
{
	if (cur < 0) {
		*l = *r = -1;
		return;
	}
	if (TN(t, cur).key < key) {
		int32_t a, b;
		treap_split(t, TN(t, cur).r, key, &a, &b);
		TN(t, cur).r = a;
		*l = cur;
		*r = b;
	} else {
		int32_t a, b;
		treap_split(t, TN(t, cur).l, key, &a, &b);
		TN(t, cur).l = b;
		*l = a;
		*r = cur;
	}
}

static int32_t treap_merge(treap *t, int32_t a, int32_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	if (TN(t, a).prio > TN(t, b).prio) {
		TN(t, a).r = treap_merge(t, TN(t, a).r, b);
		return a;
	}
	TN(t, b).l = treap_merge(t, a, TN(t, b).l);
	return b;
}

/* map[key] = (end, die). */
static int treap_set(treap *t, uint64_t key, uint64_t end, uint32_t die)
{
	int32_t at = treap_le(t, key);
	if (at >= 0 && TN(t, at).key == key) {
		TN(t, at).end = end;
		TN(t, at).die = die;
		return 0;
	}
	if (t->nodes.n >= INT32_MAX)
		return -1;
	tnode *n = vec_push(&t->nodes);
	if (!n)
		return -1;
	int32_t id = (int32_t)(t->nodes.n - 1);
	*n = (tnode){key, end, die, next_prio(t), -1, -1};
	int32_t l, r;
	treap_split(t, t->root, key, &l, &r);
	t->root = treap_merge(t, treap_merge(t, l, id), r);
	return 0;
}

/* Appends the in-order entries of T to OUT as (key, end, die). */
static int treap_flatten(treap *t, vec *out)
{
	vec stack = VEC(int32_t);
	int32_t cur = t->root;
	int rc = 0;
	while (rc == 0 && (cur >= 0 || stack.n)) {
		while (cur >= 0) {
			int32_t *slot = vec_push(&stack);
			if (!slot) {
				rc = -1;
				break;
			}
			*slot = cur;
			cur = TN(t, cur).l;
		}
		if (rc || !stack.n)
			break;
		cur = AT(stack, int32_t, --stack.n);
		ival *iv = vec_push(out);
		if (!iv) {
			rc = -1;
			break;
		}
		*iv = (ival){TN(t, cur).key, TN(t, cur).end, TN(t, cur).die};
		cur = TN(t, cur).r;
	}
	free(stack.p);
	return rc;
}

/*
 * The DIE map of unit CU as llvm builds it, flattened to what a lookup
 * sees: entry k answers for [key_k, min(end_k, key_k+1)).
 */
static int build_die_map(const sym_debuginfo *di, const sym_di_cu *cu, vec *out,
			 sym_error *err)
{
	treap t = {VEC(tnode), -1, 0x2545f491u};
	int rc = 0;
	for (uint32_t i = 0; i < cu->nsubs && rc == 0; i++) {
		uint32_t die = cu->first_sub + i;
		const sym_di_sub *sub = &di->subs[die];
		for (uint32_t k = 0; k < sub->nranges && rc == 0; k++) {
			const sym_range *r = &di->ranges[sub->first_range + k];
			if (r->lo == r->hi)
				continue;
			int32_t b = treap_le(&t, r->lo);
			if (b >= 0 && r->lo < TN(&t, b).end) {
				uint64_t bkey = TN(&t, b).key, bend = TN(&t, b).end;
				uint32_t bdie = TN(&t, b).die;
				if (r->hi < bend)
					rc = treap_set(&t, r->hi, bend, bdie);
				if (rc == 0 && r->lo > bkey)
					rc = treap_set(&t, bkey, r->lo, bdie);
			}
			if (rc == 0)
				rc = treap_set(&t, r->lo, r->hi, die);
		}
	}
	size_t start = out->n;
	if (rc == 0)
		rc = treap_flatten(&t, out);
	free(t.nodes.p);
	if (rc)
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	/* Clip each entry at the next key: that is where lookups switch. */
	ival *v = (ival *)out->p + start;
	size_t n = out->n - start;
	for (size_t i = 0; i + 1 < n; i++)
		if (v[i].hi > v[i + 1].lo)
			v[i].hi = v[i + 1].lo;
	for (size_t i = 0; i < n; i++)
		if (v[i].hi < v[i].lo)
			v[i].hi = v[i].lo;
	return SYM_OK;
}

/* ---- per-unit line map (llvm's LineTable::lookupAddress) -------------------- */

typedef struct seq_key {
	uint64_t hi;
	uint32_t index;
} seq_key;

/* llvm sorts sequences by their end; ties keep table order here. */
static int cmp_seq_key(const void *a, const void *b)
{
	const seq_key *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* std::upper_bound(rows + first + 1, rows + last - 1, A) - 1. */
static uint32_t row_lookup(const sym_di_row *rows, uint32_t first, uint32_t last,
			   uint64_t a)
{
	uint32_t lo = first + 1, hi = last - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a < rows[mid].addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

static int build_line_map(const sym_debuginfo *di, const sym_di_cu *cu, vec *out,
			  sym_error *err)
{
	if (cu->nseqs == 0)
		return SYM_OK;
	seq_key *order = malloc(cu->nseqs * sizeof *order);
	if (!order)
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < cu->nseqs; i++)
		order[i] = (seq_key){di->seqs[cu->first_seq + i].hi, cu->first_seq + i};
	qsort(order, cu->nseqs, sizeof *order, cmp_seq_key);
	vec addrs = VEC(uint64_t);
	int rc = SYM_OK;
	uint64_t prev_hi = 0;
	for (uint32_t k = 0; k < cu->nseqs && rc == SYM_OK; k++) {
		const sym_di_seq *s = &di->seqs[order[k].index];
		uint64_t start = s->lo > prev_hi ? s->lo : prev_hi;
		prev_hi = s->hi;
		if (start >= s->hi)
			continue;
		uint32_t first = s->first_row, last = s->first_row + s->nrows;
		/* The answer changes only at row addresses: evaluate there. */
		addrs.n = 0;
		uint64_t *a0 = vec_push(&addrs);
		if (!a0) {
			rc = fail(err, SYM_ERR_NOMEM, "out of memory");
			break;
		}
		*a0 = start;
		for (uint32_t r = first; r < last - 1; r++) {
			uint64_t x = di->rows[r].addr;
			if (x <= start || x >= s->hi)
				continue;
			uint64_t *ax = vec_push(&addrs);
			if (!ax) {
				rc = fail(err, SYM_ERR_NOMEM, "out of memory");
				break;
			}
			*ax = x;
		}
		if (rc)
			break;
		uint64_t *av = addrs.p;
		bool sorted = true;
		for (size_t i = 1; i < addrs.n && sorted; i++)
			sorted = av[i - 1] <= av[i];
		if (!sorted)
			qsort(av, addrs.n, sizeof *av, cmp_u64);
		for (size_t i = 0; i < addrs.n; i++) {
			if (i > 0 && av[i] == av[i - 1])
				continue;
			uint64_t hi = s->hi;
			for (size_t j = i + 1; j < addrs.n; j++)
				if (av[j] != av[i]) {
					hi = av[j];
					break;
				}
			ival *iv = vec_push(out);
			if (!iv) {
				rc = fail(err, SYM_ERR_NOMEM, "out of memory");
				break;
			}
			*iv = (ival){av[i], hi, row_lookup(di->rows, first, last, av[i])};
		}
	}
	free(addrs.p);
	free(order);
	return rc;
}

/* ---- building the cache ----------------------------------------------------- */

typedef struct unit_maps {
	size_t die_first, die_n;   /* into dies */
	size_t line_first, line_n; /* into lines */
} unit_maps;

typedef struct builder {
	const sym_macho_slice *slice;
	sym_strtab *st;
	sym_debuginfo di;
	vec syms;   /* tsym */
	vec cumap;  /* ival: address -> unit index */
	vec dies;   /* ival: address -> sub index, per unit */
	vec lines;  /* ival: address -> row index, per unit */
	unit_maps *units;
	vec functions, locations; /* symc_function, symc_location */
	recset fset, lset;
	uint32_t *display;        /* raw string id -> display id + 1, by slot */
	uint32_t *display_keys;
	size_t display_slots, display_n;
	vec range_starts, range_locs; /* uint32_t */
	uint64_t base;
	bool has_dwarf;
	sym_error *err;
} builder;

/* Display name (demangled when llvm would) for raw name RAW. */
static uint32_t display_name(builder *b, uint32_t raw)
{
	if ((b->display_n + 1) * 2 > b->display_slots) {
		size_t n = b->display_slots ? b->display_slots * 2 : 4096;
		uint32_t *keys = calloc(n, sizeof *keys), *vals = calloc(n, sizeof *vals);
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return SYM_NO_STR;
		}
		for (size_t i = 0; i < b->display_slots; i++) {
			if (!b->display_keys[i])
				continue;
			size_t h = (b->display_keys[i] * 2654435761u) & (n - 1);
			while (keys[h])
				h = (h + 1) & (n - 1);
			keys[h] = b->display_keys[i];
			vals[h] = b->display[i];
		}
		free(b->display_keys);
		free(b->display);
		b->display_keys = keys;
		b->display = vals;
		b->display_slots = n;
	}
	size_t mask = b->display_slots - 1;
	size_t h = ((raw + 1u) * 2654435761u) & mask;
	for (; b->display_keys[h]; h = (h + 1) & mask)
		if (b->display_keys[h] == raw + 1)
			return b->display[h] - 1;
	uint32_t id = raw;
	char *dem = sym_demangle(sym_strtab_get(b->st, raw));
	if (dem) {
		id = sym_strtab_intern(b->st, dem, strlen(dem));
		free(dem);
		if (id == SYM_NO_STR)
			return SYM_NO_STR;
	}
	b->display_keys[h] = raw + 1;
	b->display[h] = id + 1;
	b->display_n++;
	return id;
}

/* Mach-O symbol spelling of a DWARF name: C and C++ names gain the '_'
 * prefix; Objective-C methods are spelled as they are. */
static uint32_t macho_symbol(builder *b, uint32_t name)
{
	const char *s = sym_strtab_get(b->st, name);
	if (!s[0] || ((s[0] == '-' || s[0] == '+') && s[1] == '['))
		return name;
	size_t len = strlen(s);
	char *buf = malloc(len + 2);
	if (!buf)
		return SYM_NO_STR;
	buf[0] = '_';
	memcpy(buf + 1, s, len + 1);
	uint32_t id = sym_strtab_intern(b->st, buf, len + 1);
	free(buf);
	return id;
}

static uint32_t entry_offset(const builder *b, uint64_t addr, bool known)
{
	if (!known || addr < b->base || addr - b->base >= ADDR_SPAN)
		return SYMC_NONE;
	return (uint32_t)(addr - b->base);
}

typedef struct frame {
	uint32_t name_raw; /* raw name id or SYM_NO_STR */
	uint32_t symbol;   /* raw Mach-O symbol id or SYM_NO_STR (from DWARF) */
	bool from_symtab;
	uint64_t start;
	bool has_start;
	uint32_t file, line, column;
} frame;

static uint32_t function_record(builder *b, const frame *f)
{
	symc_function fn = {0, 0, entry_offset(b, f->start, f->has_start)};
	if (f->name_raw == SYM_NO_STR) {
		fn.name = fn.symbol = 0; /* "" */
	} else if (f->from_symtab) {
		const char *raw = sym_strtab_get(b->st, f->name_raw);
		/* llvm drops the Mach-O '_' before demangling. */
		uint32_t stripped = f->name_raw;
		if (raw[0] == '_')
			stripped = sym_strtab_intern(b->st, raw + 1, strlen(raw + 1));
		if (stripped == SYM_NO_STR)
			return SYMC_NONE;
		fn.name = display_name(b, stripped);
		fn.symbol = f->name_raw;
	} else {
		fn.name = display_name(b, f->name_raw);
		fn.symbol = macho_symbol(b, f->name_raw);
	}
	if (fn.name == SYM_NO_STR || fn.symbol == SYM_NO_STR)
		return SYMC_NONE;
	return recset_intern(&b->fset, &fn);
}

/* The frames llvm-symbolizer reports at A (innermost first); returns the
 * location index of the innermost, SYMC_NONE for "nothing", or
 * SYMC_NONE - 1 on allocation failure. */
#define LOC_FAILED (SYMC_NONE - 1)

static uint32_t evaluate(builder *b, uint64_t a)
{
	frame frames[SYM_MAX_FRAMES];
	size_t n = 0;
	const sym_debuginfo *di = &b->di;
	uint32_t cu = b->cumap.n ? ival_at(b->cumap.p, b->cumap.n, a) : SYM_NONE;
	if (cu != SYM_NONE) {
		const unit_maps *um = &b->units[cu];
		uint32_t die = ival_at((ival *)b->dies.p + um->die_first, um->die_n, a);
		uint32_t row = ival_at((ival *)b->lines.p + um->line_first, um->line_n, a);
		const sym_di_row *r = row != SYM_NONE ? &di->rows[row] : NULL;
		bool row_ok = r && r->file != SYM_NO_STR;
		if (die == SYM_NONE) {
			frames[n++] = (frame){SYM_NO_STR, SYM_NO_STR, false, 0, false,
					      row_ok ? r->file : SYMC_NONE,
					      row_ok ? r->line : 0, row_ok ? r->column : 0};
		}
		uint32_t prev = SYM_NONE;
		for (uint32_t d = die; d != SYM_NONE && n < SYM_MAX_FRAMES;
		     prev = d, d = di->subs[d].parent) {
			const sym_di_sub *sub = &di->subs[d];
			frame f = {sub->name, SYM_NO_STR, false, sub->low_pc, sub->has_low_pc,
				   SYMC_NONE, 0, 0};
			if (!f.has_start && sub->nranges) {
				f.start = di->ranges[sub->first_range].lo;
				f.has_start = true;
			}
			if (prev == SYM_NONE) {
				if (row_ok) {
					f.file = r->file;
					f.line = r->line;
					f.column = r->column;
				}
			} else {
				const sym_di_sub *callee = &di->subs[prev];
				f.file = callee->call_file == SYM_NO_STR ? SYMC_NONE
									 : callee->call_file;
				f.line = callee->call_line;
				f.column = callee->call_column;
			}
			frames[n++] = f;
		}
	}
	const tsym *sym = b->syms.n ? symbol_at(&b->syms, a) : NULL;
	if (sym) {
		if (n == 0)
			frames[n++] = (frame){SYM_NO_STR, SYM_NO_STR, false, 0, false,
					      SYMC_NONE, 0, 0};
		frames[n - 1].name_raw = sym->raw;
		frames[n - 1].from_symtab = true;
		frames[n - 1].start = sym->addr;
		frames[n - 1].has_start = true;
	}
	if (n == 0 || (n == 1 && frames[0].name_raw == SYM_NO_STR &&
		       frames[0].file == SYMC_NONE && frames[0].line == 0))
		return SYMC_NONE;
	uint32_t parent = SYMC_NONE;
	for (size_t i = n; i-- > 0;) {
		uint32_t fn = function_record(b, &frames[i]);
		if (fn == SYMC_NONE)
			return LOC_FAILED;
		symc_location loc = {fn, frames[i].file, frames[i].line, frames[i].column,
				     parent};
		parent = recset_intern(&b->lset, &loc);
		if (parent == SYMC_NONE)
			return LOC_FAILED;
	}
	return parent;
}

static int push_boundary(vec *v, uint64_t x)
{
	uint64_t *slot = vec_push(v);
	if (!slot)
		return -1;
	*slot = x;
	return 0;
}

static int add_ival_bounds(vec *bounds, const vec *iv)
{
	for (size_t i = 0; i < iv->n; i++) {
		const ival *x = &AT(*iv, ival, i);
		if (push_boundary(bounds, x->lo) || push_boundary(bounds, x->hi))
			return -1;
	}
	return 0;
}

static int emit_range(builder *b, uint64_t start, uint32_t loc)
{
	size_t n = b->range_locs.n;
	if (n && AT(b->range_locs, uint32_t, n - 1) == loc)
		return 0;
	if (!n && loc == SYMC_NONE)
		return 0;
	uint32_t *s = vec_push(&b->range_starts), *l = vec_push(&b->range_locs);
	if (!s || !l)
		return -1;
	*s = (uint32_t)(start - b->base);
	*l = loc;
	return 0;
}

static int build_ranges(builder *b)
{
	vec bounds = VEC(uint64_t);
	int rc = add_ival_bounds(&bounds, &b->cumap) || add_ival_bounds(&bounds, &b->dies) ||
		 add_ival_bounds(&bounds, &b->lines);
	for (size_t i = 0; rc == 0 && i < b->syms.n; i++) {
		const tsym *t = &AT(b->syms, tsym, i);
		rc = push_boundary(&bounds, t->addr);
		if (rc == 0 && t->size && t->addr + t->size > t->addr)
			rc = push_boundary(&bounds, t->addr + t->size);
	}
	uint64_t end = b->base + ADDR_SPAN < b->base ? UINT64_MAX : b->base + ADDR_SPAN;
	if (rc == 0)
		rc = push_boundary(&bounds, end);
	if (rc) {
		free(bounds.p);
		return fail(b->err, SYM_ERR_NOMEM, "out of memory");
	}
	uint64_t *v = bounds.p;
	qsort(v, bounds.n, sizeof *v, cmp_u64);
	for (size_t i = 0; i < bounds.n && rc == 0; i++) {
		if (v[i] < b->base || v[i] >= end || (i && v[i] == v[i - 1]))
			continue;
		uint32_t loc = evaluate(b, v[i]);
		if (loc == LOC_FAILED) {
			rc = -1;
			break;
		}
		rc = emit_range(b, v[i], loc);
	}
	free(bounds.p);
	if (rc)
		return fail(b->err, SYM_ERR_NOMEM, "out of memory");
	return SYM_OK;
}

static int build_maps(builder *b)
{
	sym_debuginfo *di = &b->di;
	int rc = build_cu_map(di, &b->cumap, b->err);
	if (rc)
		return rc;
	b->units = calloc(di->ncus ? di->ncus : 1, sizeof *b->units);
	if (!b->units)
		return fail(b->err, SYM_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < di->ncus && rc == SYM_OK; i++) {
		unit_maps *um = &b->units[i];
		um->die_first = b->dies.n;
		rc = build_die_map(di, &di->cus[i], &b->dies, b->err);
		um->die_n = b->dies.n - um->die_first;
		um->line_first = b->lines.n;
		if (rc == SYM_OK)
			rc = build_line_map(di, &di->cus[i], &b->lines, b->err);
		um->line_n = b->lines.n - um->line_first;
	}
	return rc;
}

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

static int serialize(builder *b, uint8_t **out_buf, size_t *out_len,
		     sym_cache_stats *stats)
{
	size_t nfn = b->functions.n, nloc = b->locations.n, nr = b->range_starts.n;
	size_t off = sizeof(symc_header);
	size_t strings_off = off;
	off = align8(off + b->st->len);
	size_t functions_off = off;
	off = align8(off + nfn * sizeof(symc_function));
	size_t locations_off = off;
	off = align8(off + nloc * sizeof(symc_location));
	size_t ranges_off = off;
	off = align8(off + nr * 8);
	if (off > UINT32_MAX)
		return fail(b->err, SYM_ERR_NOMEM, "symcache would exceed 4 GiB");
	uint8_t *buf = calloc(1, off);
	if (!buf)
		return fail(b->err, SYM_ERR_NOMEM, "out of memory");
	/* Distinct files, for the header's information only. */
	uint32_t nfiles = 0;
	{
		uint8_t *seen = calloc(b->st->len ? b->st->len : 1, 1);
		if (!seen) {
			free(buf);
			return fail(b->err, SYM_ERR_NOMEM, "out of memory");
		}
		for (size_t i = 0; i < nloc; i++) {
			uint32_t f = AT(b->locations, symc_location, i).file;
			if (f != SYMC_NONE && !seen[f]) {
				seen[f] = 1;
				nfiles++;
			}
		}
		free(seen);
	}
	const sym_slice_info *si = &b->slice->info;
	symc_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, SYMC_MAGIC, 8);
	h.version = SYM_CACHE_VERSION;
	h.flags = (b->has_dwarf ? SYMC_FLAG_HAS_DWARF : 0) |
		  (si->has_uuid ? SYMC_FLAG_HAS_UUID : 0);
	h.cputype = si->cputype;
	h.cpusubtype = si->cpusubtype;
	memcpy(h.uuid, si->uuid, 16);
	h.base_address = b->base;
	h.text_size = si->text_vmsize;
	h.file_size = off;
	h.strings_off = (uint32_t)strings_off;
	h.strings_len = (uint32_t)b->st->len;
	h.functions_off = (uint32_t)functions_off;
	h.nfunctions = (uint32_t)nfn;
	h.locations_off = (uint32_t)locations_off;
	h.nlocations = (uint32_t)nloc;
	h.ranges_off = (uint32_t)ranges_off;
	h.nranges = (uint32_t)nr;
	h.nfiles = nfiles;
	memcpy(buf, &h, sizeof h);
	memcpy(buf + strings_off, b->st->blob, b->st->len);
	if (nfn)
		memcpy(buf + functions_off, b->functions.p, nfn * sizeof(symc_function));
	if (nloc)
		memcpy(buf + locations_off, b->locations.p, nloc * sizeof(symc_location));
	if (nr) {
		memcpy(buf + ranges_off, b->range_starts.p, nr * 4);
		memcpy(buf + ranges_off + nr * 4, b->range_locs.p, nr * 4);
	}
	if (stats) {
		uint32_t inl = 0;
		for (size_t i = 0; i < nloc; i++)
			inl += AT(b->locations, symc_location, i).inlined_into != SYMC_NONE;
		stats->functions = (uint32_t)nfn;
		stats->ranges = (uint32_t)nr;
		stats->files = nfiles;
		stats->inline_records = inl;
		stats->bytes = off;
	}
	*out_buf = buf;
	*out_len = off;
	return SYM_OK;
}

static void builder_free(builder *b)
{
	sym_debuginfo_free(&b->di);
	free(b->syms.p);
	free(b->cumap.p);
	free(b->dies.p);
	free(b->lines.p);
	free(b->units);
	free(b->functions.p);
	free(b->locations.p);
	free(b->fset.slots);
	free(b->lset.slots);
	free(b->display);
	free(b->display_keys);
	free(b->range_starts.p);
	free(b->range_locs.p);
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
		return fail(err, SYM_ERR_NOT_FOUND, "no such slice");
	const sym_macho_slice *dwarf_slice =
		dwarf_obj ? sym_macho_slice_at(dwarf_obj, j) : sym_macho_slice_at(obj, i);
	sym_strtab st;
	if (sym_strtab_init(&st) != 0)
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	builder b;
	memset(&b, 0, sizeof b);
	b.slice = sym_macho_slice_at(obj, i);
	b.st = &st;
	b.err = err;
	b.base = b.slice->info.text_vmaddr;
	b.syms = VEC(tsym);
	b.cumap = VEC(ival);
	b.dies = VEC(ival);
	b.lines = VEC(ival);
	b.functions = VEC(symc_function);
	b.locations = VEC(symc_location);
	b.fset.records = &b.functions;
	b.lset.records = &b.locations;
	b.range_starts = VEC(uint32_t);
	b.range_locs = VEC(uint32_t);

	b.has_dwarf = dwarf_slice->info.has_dwarf;
	int rc = sym_dwarf_load(dwarf_slice, &st, &b.di, err);
	if (rc == SYM_OK)
		rc = collect_symbols(b.slice, &st, &b.syms, err);
	if (rc == SYM_OK)
		rc = build_maps(&b);
	if (rc == SYM_OK)
		rc = build_ranges(&b);
	if (rc == SYM_OK)
		rc = serialize(&b, out_buf, out_len, stats);
	builder_free(&b);
	sym_strtab_free(&st);
	return rc;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int sym_cache_write(const sym_object *obj, size_t i, const char *path,
		    sym_cache_stats *stats, sym_error *err)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = sym_cache_build(obj, i, &buf, &len, stats, err);
	if (rc)
		return rc;
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 32);
	if (!tmp) {
		free(buf);
		return fail(err, SYM_ERR_NOMEM, "out of memory");
	}
	snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = fail(err, SYM_ERR_IO, "%s: %s", tmp, strerror(errno));
	} else {
		if (write_all(fd, buf, len) != 0 || fsync(fd) != 0)
			rc = fail(err, SYM_ERR_IO, "%s: %s", tmp, strerror(errno));
		if (close(fd) != 0 && rc == SYM_OK)
			rc = fail(err, SYM_ERR_IO, "%s: %s", tmp, strerror(errno));
		if (rc == SYM_OK && rename(tmp, path) != 0)
			rc = fail(err, SYM_ERR_IO, "%s: %s", path, strerror(errno));
		if (rc)
			unlink(tmp);
	}
	free(tmp);
	free(buf);
	return rc;
}
