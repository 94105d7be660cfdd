/*
 * answer.c — computes sym_answer (answer.h): for every address, the frames
 * and the line llvm-symbolizer reports.
 *
 * Four lookups decide an answer, each reproduced from llvm here:
 *   - the owning unit: DWARFDebugAranges (.debug_aranges, then the units'
 *     own ranges; on overlap the lowest unit offset, extended while valid);
 *   - the innermost subroutine DIE: DWARFUnit::updateAddressDieMap, a
 *     std::map<lo, (hi, die)> filled in DIE pre-order, emulated by a treap;
 *   - the line row: LineTable::lookupAddress (sequences by end address,
 *     upper_bound over the rows);
 *   - the symbol: getNameFromSymbolTable, which names the outermost frame.
 * Each is piecewise constant. We collect all their boundaries, evaluate once
 * per elementary interval, and merge neighbours with equal answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolizer/answer.h"
#include "symbolizer/symtab.h"

#define ADDR_SPAN (UINT64_C(1) << 32) /* what u32 offsets can address */

static int nomem(sym_error *err)
{
	if (err)
		snprintf(err->msg, sizeof err->msg, "out of memory");
	return SYM_ERR_NOMEM;
}

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

/* The start and end of [LO, HI) claimed by unit id CU into EPS. */
static int push_span(vec *eps, uint64_t lo, uint64_t hi, uint32_t cu, sym_error *err)
{
	endpoint *s = vec_push(eps), *e = s ? vec_push(eps) : NULL;
	if (!e)
		return nomem(err);
	*s = (endpoint){lo, cu, true};
	*e = (endpoint){hi, cu, false};
	return SYM_OK;
}

/* Every claim's endpoints: the aranges', then the ranges of the units the
 * aranges do not cover. Unknown aranges offsets get the id ncus. */
static int collect_endpoints(const sym_debuginfo *di, vec *eps, sym_error *err)
{
	int rc = SYM_OK;
	for (size_t i = 0; i < di->naranges && rc == SYM_OK; i++) {
		const sym_di_arange *a = &di->aranges[i];
		if (a->lo >= a->hi)
			continue;
		uint32_t cu = cu_index_of(di, a->cu_offset);
		if (cu == SYM_NONE)
			cu = (uint32_t)di->ncus; /* "owned by nobody we know" */
		rc = push_span(eps, a->lo, a->hi, cu, err);
	}
	for (size_t i = 0; i < di->ncus && rc == SYM_OK; i++) {
		const sym_di_cu *cu = &di->cus[i];
		if (in_sorted(di->arange_cus, di->narange_cus, cu->offset))
			continue;
		for (uint32_t r = 0; r < cu->nranges && rc == SYM_OK; r++) {
			const sym_range *rg = &di->ranges[cu->first_range + r];
			if (rg->lo < rg->hi)
				rc = push_span(eps, rg->lo, rg->hi, (uint32_t)i, err);
		}
	}
	return rc;
}

/*
 * The sweep over the N sorted endpoints EP: between two endpoints the owner
 * is the lowest valid id, kept as a count per unit id and a Fenwick tree
 * over "count > 0" to find it in O(log n).
 */
static int sweep(const sym_debuginfo *di, const endpoint *ep, size_t n, vec *out, sym_error *err)
{
	size_t nids = di->ncus + 1;
	uint32_t *count = calloc(nids, sizeof *count);
	uint32_t *bit = calloc(nids + 1, sizeof *bit);
	int rc = count && bit ? SYM_OK : nomem(err);
	size_t valid = 0;
	uint64_t prev = UINT64_MAX;
	for (size_t i = 0; i < n && rc == SYM_OK; i++) {
		if (prev < ep[i].addr && valid > 0) {
			uint32_t first = bit_first(bit, nids);
			ival *last = out->n ? &AT(*out, ival, out->n - 1) : NULL;
			if (last && last->hi == prev && count[last->value] > 0) {
				last->hi = ep[i].addr;
			} else {
				ival *iv = vec_push(out);
				if (!iv)
					rc = nomem(err);
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
	return rc;
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
	int rc = collect_endpoints(di, &eps, err);
	if (rc == SYM_OK) {
		if (eps.n)
			qsort(eps.p, eps.n, sizeof(endpoint), cmp_endpoint);
		rc = sweep(di, eps.p, eps.n, out, err);
	}
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
		return nomem(err);
	if (out->n == start)
		return SYM_OK;
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

/*
 * Sorts V[0..n) ascending: LSD radix sort, 16 bits a pass, skipping passes
 * where every key has the same digit (addresses share their high bits).
 * Millions of boundaries sort several times faster than with qsort.
 * Without memory for the scratch buffer it falls back to qsort.
 */
static void sort_u64(uint64_t *v, size_t n)
{
	if (n < 4096) {
		if (n)
			qsort(v, n, sizeof *v, cmp_u64);
		return;
	}
	uint64_t *tmp = malloc(n * sizeof *tmp);
	size_t *count = malloc(65536 * sizeof *count);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		qsort(v, n, sizeof *v, cmp_u64);
		return;
	}
	uint64_t *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 64; shift += 16) {
		memset(count, 0, 65536 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		if (count[(src[0] >> shift) & 0xffff] == n)
			continue;
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
	free(count);
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
		return nomem(err);
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
			rc = nomem(err);
			break;
		}
		*a0 = start;
		for (uint32_t r = first; r < last - 1; r++) {
			uint64_t x = di->rows[r].addr;
			if (x <= start || x >= s->hi)
				continue;
			uint64_t *ax = vec_push(&addrs);
			if (!ax) {
				rc = nomem(err);
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
				rc = nomem(err);
				break;
			}
			*iv = (ival){av[i], hi, row_lookup(di->rows, first, last, av[i])};
		}
	}
	free(addrs.p);
	free(order);
	return rc;
}


/* ---- evaluation --------------------------------------------------------- */

typedef struct unit_maps {
	size_t die_first, die_n;   /* into builder.dies */
	size_t line_first, line_n; /* into builder.lines */
} unit_maps;

typedef struct builder {
	const sym_debuginfo *di;
	const vec *syms;
	uint64_t base;
	vec cumap; /* ival: address -> unit index */
	vec dies;  /* ival: address -> sub index, per unit */
	vec lines; /* ival: address -> row index, per unit */
	unit_maps *units;
	recset scope_set;
	sym_answer *out;
	sym_error *err;
} builder;

static uint32_t entry_offset(const builder *b, uint64_t addr)
{
	if (addr < b->base || addr - b->base >= ADDR_SPAN)
		return SYM_NONE;
	return (uint32_t)(addr - b->base);
}

/* The line row llvm reports for A (file, line, column), or file SYM_NO_STR. */
static sym_line_range line_at(const builder *b, uint32_t cu, uint64_t a)
{
	sym_line_range l = {0, SYM_NO_STR, 0, 0};
	if (cu == SYM_NONE)
		return l;
	const unit_maps *um = &b->units[cu];
	if (um->line_n == 0)
		return l;
	uint32_t row = ival_at((const ival *)b->lines.p + um->line_first, um->line_n, a);
	if (row == SYM_NONE)
		return l;
	const sym_di_row *r = &b->di->rows[row];
	/* A row whose file index is not in the table gives neither file nor
	 * line (llvm's getFileLineInfoForAddress fails as a whole). */
	if (r->file == SYM_NO_STR)
		return l;
	l.file = r->file;
	l.line = r->line;
	l.column = r->column;
	return l;
}

/* Interns the chain for A into *OUT (SYM_NONE: no frames); -1 on OOM. */
static int scope_at(builder *b, uint32_t cu, uint64_t a, bool has_line, uint32_t *out)
{
	const sym_debuginfo *di = b->di;
	uint32_t chain[SYM_MAX_FRAMES];
	size_t n = 0;
	if (cu != SYM_NONE) {
		const unit_maps *um = &b->units[cu];
		uint32_t die = um->die_n ? ival_at((const ival *)b->dies.p + um->die_first,
						   um->die_n, a)
					 : SYM_NONE;
		for (uint32_t d = die; d != SYM_NONE && n < SYM_MAX_FRAMES; d = di->subs[d].parent)
			chain[n++] = d;
	}
	const sym_tsym *sym = b->syms->n ? sym_symtab_at(b->syms, a) : NULL;
	/* A unit without a DIE here still reports its line, nameless. */
	bool anonymous = n == 0 && cu != SYM_NONE && has_line;
	*out = SYM_NONE;
	if (n == 0 && !anonymous && !sym)
		return 0;
	size_t frames = n ? n : 1;
	uint32_t parent = SYM_NONE;
	for (size_t i = frames; i-- > 0;) {
		sym_scope s = {SYM_NO_STR, 0, SYM_NONE, parent, SYM_NO_STR, 0, 0};
		if (n) {
			const sym_di_sub *sub = &di->subs[chain[i]];
			s.name = sub->name;
			if (sub->has_low_pc)
				s.entry = entry_offset(b, sub->low_pc);
			else if (sub->nranges)
				s.entry = entry_offset(b, di->ranges[sub->first_range].lo);
			/* Only a frame with a parent shows a call site (on that
			 * parent); the outermost leaves it out so equal chains
			 * share one scope. */
			if (i + 1 < frames) {
				s.call_file = sub->call_file;
				s.call_line = sub->call_line;
				s.call_column = sub->call_column;
			}
		}
		if (i + 1 == frames && sym) {
			s.name = sym->raw;
			s.from_symtab = 1;
			s.entry = entry_offset(b, sym->addr);
		}
		parent = recset_intern(&b->scope_set, &s);
		if (parent == RECSET_FAILED)
			return -1;
	}
	*out = parent;
	return 0;
}

static int push_u64(vec *v, uint64_t x)
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
		if (push_u64(bounds, x->lo) || push_u64(bounds, x->hi))
			return -1;
	}
	return 0;
}

static int emit(builder *b, uint64_t a, uint32_t scope, sym_line_range line)
{
	sym_answer *o = b->out;
	uint32_t start = (uint32_t)(a - b->base);
	size_t n = o->ranges.n;
	if (n ? AT(o->ranges, sym_scope_range, n - 1).scope != scope : scope != SYM_NONE) {
		sym_scope_range *r = vec_push(&o->ranges);
		if (!r)
			return -1;
		*r = (sym_scope_range){start, scope};
	}
	n = o->lines.n;
	const sym_line_range *last = n ? &AT(o->lines, sym_line_range, n - 1) : NULL;
	bool same = last ? last->file == line.file && last->line == line.line &&
				   last->column == line.column
			 : line.file == SYM_NO_STR;
	if (!same) {
		sym_line_range *l = vec_push(&o->lines);
		if (!l)
			return -1;
		line.start = start;
		*l = line;
	}
	return 0;
}

static int evaluate_all(builder *b)
{
	vec bounds = VEC(uint64_t);
	int rc = add_ival_bounds(&bounds, &b->cumap) || add_ival_bounds(&bounds, &b->dies) ||
		 add_ival_bounds(&bounds, &b->lines);
	for (size_t i = 0; rc == 0 && i < b->syms->n; i++) {
		const sym_tsym *t = &AT(*b->syms, sym_tsym, i);
		rc = push_u64(&bounds, t->addr);
		if (rc == 0 && t->size && t->addr + t->size > t->addr)
			rc = push_u64(&bounds, t->addr + t->size);
	}
	uint64_t end = b->base + ADDR_SPAN < b->base ? UINT64_MAX : b->base + ADDR_SPAN;
	if (rc == 0)
		rc = push_u64(&bounds, b->base) || push_u64(&bounds, end);
	if (rc) {
		free(bounds.p);
		return nomem(b->err);
	}
	uint64_t *v = bounds.p;
	sort_u64(v, bounds.n);
	for (size_t i = 0; i < bounds.n && rc == 0; i++) {
		if (v[i] < b->base || v[i] >= end || (i && v[i] == v[i - 1]))
			continue;
		uint32_t cu = b->cumap.n ? ival_at(b->cumap.p, b->cumap.n, v[i]) : SYM_NONE;
		sym_line_range line = line_at(b, cu, v[i]);
		uint32_t scope;
		if (scope_at(b, cu, v[i], line.file != SYM_NO_STR, &scope) != 0) {
			rc = -1;
			break;
		}
		if (scope == SYM_NONE)
			line.file = SYM_NO_STR, line.line = line.column = 0;
		rc = emit(b, v[i], scope, line);
	}
	free(bounds.p);
	return rc ? nomem(b->err) : SYM_OK;
}

static int build_maps(builder *b)
{
	const sym_debuginfo *di = b->di;
	int rc = build_cu_map(di, &b->cumap, b->err);
	if (rc)
		return rc;
	b->units = calloc(di->ncus ? di->ncus : 1, sizeof *b->units);
	if (!b->units)
		return nomem(b->err);
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

int sym_answer_build(const sym_debuginfo *di, const vec *syms, uint64_t base,
		     sym_answer *out, sym_error *err)
{
	out->scopes = VEC(sym_scope);
	out->ranges = VEC(sym_scope_range);
	out->lines = VEC(sym_line_range);
	builder b;
	memset(&b, 0, sizeof b);
	b.di = di;
	b.syms = syms;
	b.base = base;
	b.cumap = VEC(ival);
	b.dies = VEC(ival);
	b.lines = VEC(ival);
	b.scope_set.records = &out->scopes;
	b.out = out;
	b.err = err;
	int rc = build_maps(&b);
	if (rc == SYM_OK)
		rc = evaluate_all(&b);
	free(b.cumap.p);
	free(b.dies.p);
	free(b.lines.p);
	free(b.units);
	free(b.scope_set.slots);
	if (rc)
		sym_answer_free(out);
	return rc;
}

void sym_answer_free(sym_answer *a)
{
	free(a->scopes.p);
	free(a->ranges.p);
	free(a->lines.p);
	memset(a, 0, sizeof *a);
}
