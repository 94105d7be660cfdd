/* test_representative.c — SPEC §4.4 representative stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "ingest/representative.h"

/* Samples with innermost addresses TOPS at times TIMES; each sample has a
 * second frame 0x1000 + index so stacks differ below the top. */
typedef struct fixture {
	ing_frame frames[16][2];
	ing_sample samples[16];
	ing_thread threads[3];
	ing_frame tframes[3][1];
	ing_report r;
} fixture;

static void setup_fx(fixture *fx, const uint64_t *tops, const int64_t *times,
		     size_t n)
{
	memset(fx, 0, sizeof *fx);
	for (size_t i = 0; i < n; i++) {
		fx->frames[i][0].address = tops[i];
		fx->frames[i][1].address = 0x1000 + i;
		fx->samples[i].t_ms = times[i];
		fx->samples[i].stack.frames = fx->frames[i];
		fx->samples[i].stack.nframes = tops[i] ? 2 : 0;
	}
	for (size_t t = 0; t < 3; t++) {
		fx->tframes[t][0].address = 0x9000 + t;
		fx->threads[t].stack.frames = fx->tframes[t];
		fx->threads[t].stack.nframes = 1;
	}
	fx->r.samples = fx->samples;
	fx->r.nsamples = n;
	fx->r.threads = fx->threads;
	fx->r.nthreads = 3;
}

static void test_most_repeated_wins(void **state)
{
	(void)state;
	fixture fx;
	const uint64_t tops[] = {0xa, 0xb, 0xa, 0xc, 0xa, 0xb};
	const int64_t times[] = {0, 50, 100, 150, 200, 250};
	setup_fx(&fx, tops, times, 6);
	ing_rep_source src;
	const ing_stack *st = ing_representative(&fx.r, &src);
	assert_int_equal(src, ING_REP_SAMPLES);
	/* 0xa three times; its most recent sample is index 4 (t 200). */
	assert_ptr_equal(st, &fx.samples[4].stack);
}

static void test_tie_goes_to_most_recent(void **state)
{
	(void)state;
	fixture fx;
	const uint64_t tops[] = {0xa, 0xa, 0xb, 0xb, 0xc};
	const int64_t times[] = {0, 50, 100, 150, 200};
	setup_fx(&fx, tops, times, 5);
	const ing_stack *st = ing_representative(&fx.r, NULL);
	/* a and b both twice; b's latest (t 150) is more recent than a's. */
	assert_ptr_equal(st, &fx.samples[3].stack);
	/* Recency is by t_ms, not array order. */
	const int64_t times2[] = {300, 50, 100, 150, 200};
	setup_fx(&fx, tops, times2, 5);
	assert_ptr_equal(ing_representative(&fx.r, NULL), &fx.samples[0].stack);
	/* Equal t_ms: the later entry. */
	const uint64_t tops3[] = {0xa, 0xb};
	const int64_t times3[] = {7, 7};
	setup_fx(&fx, tops3, times3, 2);
	assert_ptr_equal(ing_representative(&fx.r, NULL), &fx.samples[1].stack);
}

static void test_same_top_different_rest_is_same_stack(void **state)
{
	(void)state;
	fixture fx;
	/* 0xa with three different callers beats 0xb twice. */
	const uint64_t tops[] = {0xb, 0xa, 0xb, 0xa, 0xa};
	const int64_t times[] = {0, 1, 2, 3, 4};
	setup_fx(&fx, tops, times, 5);
	assert_ptr_equal(ing_representative(&fx.r, NULL), &fx.samples[4].stack);
}

/* The rule written out naively, to cross-check random sample sets. */
static size_t reference(const ing_sample *s, size_t n)
{
	size_t best = SIZE_MAX, best_count = 0;
	for (size_t i = 0; i < n; i++) {
		size_t count = 0;
		bool latest = true;
		for (size_t j = 0; j < n; j++) {
			if (s[j].stack.frames[0].address !=
			    s[i].stack.frames[0].address)
				continue;
			count++;
			if (j != i && (s[j].t_ms > s[i].t_ms ||
				       (s[j].t_ms == s[i].t_ms && j > i)))
				latest = false;
		}
		if (!latest)
			continue;
		bool newer = best != SIZE_MAX &&
			     (s[i].t_ms > s[best].t_ms ||
			      (s[i].t_ms == s[best].t_ms && i > best));
		if (best == SIZE_MAX || count > best_count ||
		    (count == best_count && newer)) {
			best = i;
			best_count = count;
		}
	}
	return best;
}

static void test_random_against_reference(void **state)
{
	(void)state;
	enum { N = 1024 };
	static ing_frame frames[N];
	static ing_sample samples[N];
	uint32_t seed = 12345;
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(round * 5) % N;
		uint32_t spread = 1 + (uint32_t)round % 9;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			frames[i].address = 0x1000 + (seed >> 16) % spread;
			seed = seed * 1103515245u + 12345u;
			samples[i].t_ms = (seed >> 16) % (n / 2 + 1);
			samples[i].stack.frames = &frames[i];
			samples[i].stack.nframes = 1;
		}
		ing_report r = {.samples = samples, .nsamples = n};
		size_t want = reference(samples, n);
		assert_ptr_equal(ing_representative(&r, NULL),
				 &samples[want].stack);
	}
}

static void test_fallbacks(void **state)
{
	(void)state;
	fixture fx;
	ing_rep_source src;
	/* Only empty samples: ignored, the main thread. */
	const uint64_t tops[] = {0, 0};
	const int64_t times[] = {0, 1};
	setup_fx(&fx, tops, times, 2);
	fx.threads[1].main = true;
	fx.threads[2].main = true;
	assert_ptr_equal(ing_representative(&fx.r, &src), &fx.threads[1].stack);
	assert_int_equal(src, ING_REP_MAIN);
	/* No main: the first thread. */
	fx.threads[1].main = fx.threads[2].main = false;
	fx.r.nsamples = 0;
	assert_ptr_equal(ing_representative(&fx.r, &src), &fx.threads[0].stack);
	assert_int_equal(src, ING_REP_FIRST);
	/* Nothing at all. */
	fx.r.nthreads = 0;
	assert_null(ing_representative(&fx.r, &src));
	assert_int_equal(src, ING_REP_NONE);
	assert_null(ing_representative(NULL, &src));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_most_repeated_wins),
		cmocka_unit_test(test_tie_goes_to_most_recent),
		cmocka_unit_test(test_same_top_different_rest_is_same_stack),
		cmocka_unit_test(test_random_against_reference),
		cmocka_unit_test(test_fallbacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
