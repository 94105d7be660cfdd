/*
 * representative.c — SPEC §4.4: which stack of a report is grouped.
 *
 * Matrix's "heaviest stack" rule: samples are taken at a fixed interval,
 * so how often a stack repeats approximates how long it ran; stacks count
 * as the same when their innermost frame is the same.
 */
#include <stdlib.h>

#include "ingest/representative.h"

/* Is sample A more recent than sample B (indices IA > IB break ties)? */
static bool more_recent(const ing_sample *a, size_t ia, const ing_sample *b,
			size_t ib)
{
	return a->t_ms != b->t_ms ? a->t_ms > b->t_ms : ia > ib;
}

typedef struct sample_key {
	uint64_t top; /* innermost frame address */
	const ing_sample *s;
	size_t index;
} sample_key;

/* By innermost address, then oldest to most recent. */
static int key_cmp(const void *pa, const void *pb)
{
	const sample_key *a = pa, *b = pb;
	if (a->top != b->top)
		return a->top < b->top ? -1 : 1;
	if (more_recent(a->s, a->index, b->s, b->index))
		return 1;
	if (more_recent(b->s, b->index, a->s, a->index))
		return -1;
	return 0;
}

/* Sorting groups equal innermost addresses together with each group's
 * most recent sample last: O(n log n) where comparing all pairs would let
 * a batch of 1,000 reports × 1,024 samples cost 10^9 steps. */
static const ing_stack *heaviest_sample(const ing_report *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].stack.nframes != 0;
	if (n == 0)
		return NULL;
	sample_key *keys = malloc(n * sizeof *keys);
	if (!keys)
		return NULL; /* out of memory: fall back to the main thread */
	n = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		if (r->samples[i].stack.nframes)
			keys[n++] = (sample_key){
				r->samples[i].stack.frames[0].address,
				&r->samples[i], i};
	qsort(keys, n, sizeof *keys, key_cmp);
	const sample_key *best = NULL;
	size_t best_count = 0;
	for (size_t start = 0; start < n;) {
		size_t end = start + 1;
		while (end < n && keys[end].top == keys[start].top)
			end++;
		const sample_key *latest = &keys[end - 1];
		size_t count = end - start;
		if (!best || count > best_count ||
		    (count == best_count &&
		     more_recent(latest->s, latest->index, best->s,
				 best->index))) {
			best = latest;
			best_count = count;
		}
		start = end;
	}
	const ing_stack *st = &best->s->stack;
	free(keys);
	return st;
}

const ing_stack *ing_representative(const ing_report *r,
				    ing_rep_source *out_source)
{
	ing_rep_source src = ING_REP_NONE;
	const ing_stack *st = NULL;
	if (r && (st = heaviest_sample(r))) {
		src = ING_REP_SAMPLES;
	} else if (r) {
		for (size_t i = 0; i < r->nthreads && !st; i++)
			if (r->threads[i].main) {
				st = &r->threads[i].stack;
				src = ING_REP_MAIN;
			}
		if (!st && r->nthreads) {
			st = &r->threads[0].stack;
			src = ING_REP_FIRST;
		}
	}
	if (out_source)
		*out_source = src;
	return st;
}
