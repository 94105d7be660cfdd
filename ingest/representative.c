/*
 * representative.c — SPEC §4.4: which stack of a report is grouped.
 *
 * Matrix's "heaviest stack" rule: samples are taken at a fixed interval,
 * so how often a stack repeats approximates how long it ran; stacks count
 * as the same when their innermost frame is the same.
 */
#include "ingest/representative.h"

/* Is sample A more recent than sample B (indices IA > IB break ties)? */
static bool more_recent(const ing_sample *a, size_t ia, const ing_sample *b,
			size_t ib)
{
	return a->t_ms != b->t_ms ? a->t_ms > b->t_ms : ia > ib;
}

static const ing_stack *heaviest_sample(const ing_report *r)
{
	const ing_sample *best = NULL;
	size_t best_i = 0, best_count = 0;
	/* For each sample, count the samples sharing its innermost address
	 * and find the group's most recent member: O(n²) over at most
	 * max_samples (1024) entries, with no allocation. */
	for (size_t i = 0; i < r->nsamples; i++) {
		const ing_sample *s = &r->samples[i];
		if (!s->stack.nframes)
			continue;
		uint64_t top = s->stack.frames[0].address;
		size_t count = 0;
		bool latest = true; /* s is its group's most recent member */
		for (size_t j = 0; j < r->nsamples; j++) {
			const ing_sample *o = &r->samples[j];
			if (!o->stack.nframes || o->stack.frames[0].address != top)
				continue;
			count++;
			if (j != i && more_recent(o, j, s, i))
				latest = false;
		}
		if (!latest)
			continue;
		if (!best || count > best_count ||
		    (count == best_count && more_recent(s, i, best, best_i))) {
			best = s;
			best_i = i;
			best_count = count;
		}
	}
	return best ? &best->stack : NULL;
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
