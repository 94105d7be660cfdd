/*
 * symcache_lookup.c — random lookups in one symcache on one core, in
 * process (symbolizer/symbolizer.h's sym_cache_lookup, nothing printed per
 * address). Built and run by bench/symcache_lookup.sh and
 * bench/symbolicate.sh; not part of `make test` (timings belong here).
 *
 *   symcache_lookup SYMCACHE N   opens SYMCACHE, looks up N addresses drawn
 *                                uniformly from its __TEXT (the worst case
 *                                for caches: a real stack's addresses
 *                                repeat), prints one JSON line: counts,
 *                                sizes, seconds and rates, wall and CPU
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "symbolizer/symbolizer.h"

static double seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* splitmix64: uniform enough for addresses, and the same every run. */
static uint64_t next_random(void)
{
	static uint64_t state = 20261129;
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: symcache_lookup SYMCACHE LOOKUPS\n");
		return 2;
	}
	long n = atol(argv[2]);
	sym_cache *c = NULL;
	sym_error err;
	double t0 = seconds(CLOCK_MONOTONIC);
	if (sym_cache_open(argv[1], &c, &err)) {
		fprintf(stderr, "open: %s\n", err.msg);
		return 1;
	}
	double t1 = seconds(CLOCK_MONOTONIC);
	sym_cache_info info;
	sym_cache_get_info(c, &info);
	sym_frame frames[SYM_MAX_FRAMES];
	/* Sums of what was found, printed so no lookup can be optimised away. */
	uint64_t found = 0, nframes = 0, lines = 0;
	double c2 = seconds(CLOCK_PROCESS_CPUTIME_ID), t2 = seconds(CLOCK_MONOTONIC);
	for (long i = 0; i < n; i++) {
		uint64_t addr = info.base_address + next_random() % info.text_size;
		size_t k = sym_cache_lookup(c, addr, frames, SYM_MAX_FRAMES);
		found += k > 0;
		nframes += k;
		lines += k ? frames[0].line : 0;
	}
	double c3 = seconds(CLOCK_PROCESS_CPUTIME_ID), t3 = seconds(CLOCK_MONOTONIC);
	printf("{\"functions\":%u,\"ranges\":%u,\"bytes\":%llu,\"open_s\":%.4f,\"lookups\":%ld,"
	       "\"found\":%llu,\"frames\":%llu,\"line_sum\":%llu,\"lookup_s\":%.3f,"
	       "\"lookups_per_s\":%.0f,\"lookups_per_cpu_s\":%.0f}\n",
	       info.functions, info.ranges, (unsigned long long)info.bytes, t1 - t0, n,
	       (unsigned long long)found, (unsigned long long)nframes, (unsigned long long)lines,
	       t3 - t2, (double)n / (t3 - t2), (double)n / (c3 - c2));
	sym_cache_close(c);
	return 0;
}
