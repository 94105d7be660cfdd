/*
 * demangle_speed.c — names demangled per second by sym_demangle, on one
 * core: reads names from standard input (one a line), demangles all of
 * them ROUNDS times in STYLE (short or full), and prints one JSON line
 * {"names","rounds","seconds","per_second","demangled"}. Built and run by
 * bench/demangle.sh; not part of `make test` (timings belong here).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbolizer/symbolizer.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: demangle_speed short|full ROUNDS <names\n");
		return 2;
	}
	sym_demangle_style style = strcmp(argv[1], "full") ? SYM_DEMANGLE_SHORT : SYM_DEMANGLE_FULL;
	long rounds = atol(argv[2]);
	char **names = NULL;
	size_t n = 0, cap = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while ((len = getline(&line, &lcap, stdin)) > 0) {
		line[strcspn(line, "\r\n")] = '\0';
		if (n == cap &&
		    !(names = realloc(names, (cap = cap ? 2 * cap : 1024) * sizeof *names)))
			return 1;
		if (!(names[n++] = strdup(line)))
			return 1;
	}
	free(line);
	size_t demangled = 0;
	double t0 = now();
	for (long r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++) {
			char *out = sym_demangle(names[i], style);
			demangled += out != NULL;
			free(out);
		}
	double seconds = now() - t0;
	printf("{\"names\":%zu,\"rounds\":%ld,\"seconds\":%.3f,\"per_second\":%.0f,"
	       "\"demangled\":%zu}\n",
	       n, rounds, seconds, (double)n * (double)rounds / seconds,
	       demangled / (size_t)rounds);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return 0;
}
