/*
 * method_map_speed.c — Android method tables on one core (symbolizer/
 * method_map.h). Built and run by bench/method_map.sh; not part of `make
 * test` (timings belong here).
 *
 *   method_map_speed gen LINES OUT    writes an app-shaped methodMapping.txt
 *                                     of LINES methods plus the dispatch line
 *   method_map_speed run IN TABLE N   converts IN (plain or gzip) to TABLE,
 *                                     opens it, then looks up N random ids
 *                                     and renders each Java-readable name;
 *                                     prints one JSON line: counts, sizes,
 *                                     seconds and rates, wall and CPU
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "symbolizer/method_map.h"

static double seconds(clockid_t clock)
{
	struct timespec t;
	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double now(void)
{
	return seconds(CLOCK_MONOTONIC);
}

/* CPU time besides wall time: the machine may be shared. */
static double cpu(void)
{
	return seconds(CLOCK_PROCESS_CPUTIME_ID);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

/* Classes of about 12 methods in packages of about 40 classes, names and
 * descriptors from the shapes an Android app has (inner and anonymous
 * classes, Kotlin lambdas, arrays, framework types). */
static int gen(long lines, const char *out)
{
	static const char *const names[] = {"onCreate",	      "onResume",
					    "onClick",	      "run",
					    "invoke",	      "<init>",
					    "bind",	      "onBindViewHolder",
					    "access$000",     "lambda$onCreate$0",
					    "getItemCount",   "handleMessage",
					    "apply",	      "emit",
					    "doInBackground", "parse",
					    "render"};
	static const char *const descs[] = {
		"()V",
		"(Landroid.os.Bundle;)V",
		"(Landroid.view.View;)V",
		"()Ljava.lang.Object;",
		"(Ljava.lang.Object;)Ljava.lang.Object;",
		"(Landroid.os.Message;)V",
		"(Landroidx.recyclerview.widget.RecyclerView$ViewHolder;I)V",
		"(I[JLjava.lang.String;)Z",
		"([[Ljava.lang.String;)I",
		"(Lkotlin.coroutines.Continuation;)Ljava.lang.Object;"};
	static const char *const kinds[] = {"Activity",
					    "Fragment",
					    "Adapter",
					    "ViewModel",
					    "Repository",
					    "Presenter$1",
					    "Adapter$ViewHolder",
					    "Fragment$onViewCreated$1",
					    "Kt",
					    "Impl"};
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	for (long id = 1; id <= lines; id++) {
		long cls = id / 12, pkg = cls / 40;
		const char *desc = descs[next_random() % 10];
		if (next_random() % 50 == 0)
			desc = NULL; /* a native method */
		fprintf(f, "%ld,%u,com.example.app.feature%ld.ui.Screen%ld%s %s%s%s\n", id,
			next_random() % 2 ? 1u : 17u, pkg, cls, kinds[cls % 10],
			names[next_random() % 17], desc ? " " : "", desc ? desc : "");
	}
	fprintf(f, "1048574,1,android.os.Handler dispatchMessage (Landroid.os.Message;)V\n");
	return fclose(f) != 0;
}

static int run(const char *in, const char *table, long n)
{
	sym_methods_stats st;
	sym_error err;
	double c0 = cpu(), t0 = now();
	if (sym_methods_convert(in, table, &st, &err)) {
		fprintf(stderr, "convert: %s\n", err.msg);
		return 1;
	}
	double c1 = cpu(), t1 = now();
	sym_methods *m = NULL;
	if (sym_methods_open(table, &m, &err)) {
		fprintf(stderr, "open: %s\n", err.msg);
		return 1;
	}
	double c2 = cpu(), t2 = now();
	char out[1024];
	size_t found = 0, bytes = 0;
	uint32_t span = (uint32_t)st.methods; /* ids 1..N and the dispatch id */
	for (long i = 0; i < n; i++) {
		sym_method meth;
		if (sym_methods_lookup(m, 1 + next_random() % span, &meth)) {
			found++;
			bytes += sym_method_readable(&meth, out, sizeof out);
		}
	}
	double c3 = cpu(), t3 = now();
	struct stat sb;
	stat(table, &sb);
	printf("{\"lines\":%zu,\"methods\":%zu,\"convert_s\":%.3f,\"convert_cpu_s\":%.3f,"
	       "\"open_s\":%.4f,\"table_bytes\":%lld,\"lookups\":%ld,\"found\":%zu,"
	       "\"name_bytes\":%zu,\"lookup_s\":%.3f,\"lookups_per_s\":%.0f,"
	       "\"lookups_per_cpu_s\":%.0f}\n",
	       st.lines, st.methods, t1 - t0, c1 - c0, t2 - t1, (long long)sb.st_size, n, found,
	       bytes, t3 - t2, (double)n / (t3 - t2), (double)n / (c3 - c2));
	sym_methods_close(m);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "gen"))
		return gen(atol(argv[2]), argv[3]);
	if (argc == 5 && !strcmp(argv[1], "run"))
		return run(argv[2], argv[3], atol(argv[4]));
	fprintf(stderr, "usage: method_map_speed gen LINES OUT | run IN TABLE LOOKUPS\n");
	return 2;
}
