/*
 * dashboard_load.c — the data set of bench/dashboard.sh, posted through the
 * ingest path at full speed by CONCURRENCY kept-alive connections.
 *
 * Report I is a function of SEED and I alone (its own xorshift state), so
 * every run with the same arguments stores the same reports, whatever the
 * concurrency or the order they arrive in: a before/after pair measures the
 * same data.
 *
 *   - level-1 group g of GROUPS (10,000) with a Zipf frequency (s = 1,
 *     group 0 the most frequent); its innermost two frames are a pair of
 *     symbolized functions of PROFILE's dSYMs, distinct for every g;
 *   - 1 to 4 level-2 subgroups per group (frames 3 and 4), the first the
 *     most frequent;
 *   - 4 more app frames fixed per group, then 3 frames in a system image
 *     (SYSTEM_UUID, a path under /usr/lib/system, so the server classes it
 *     as the system's) without symbols in every report, a frame in an app
 *     framework without a dSYM (NODSYM_UUID) in 80% of them, and an
 *     outermost app frame: stacks repeat as in production;
 *   - one of USERS (200,000) users, 5 app versions (skewed to the newest),
 *     4 OS versions, 6 devices, 3 kinds;
 *   - DAYS 1: POST /api/v1/ingest (the ingest key) on the day of the run;
 *     DAYS > 1: POST /api/v1/apps/APP/backfill?received_at=T&format=native
 *     (the admin token), T on one of the DAYS days up to today.
 *
 * PROFILE lines (written by dashboard.sh from the uploaded dSYMs):
 *   image UUID NAME LOAD SIZE    an image listed in every report
 *   func IMAGE OFFSET            an address, relative to the image's load
 *                                address, that the server symbolizes to one
 *                                function (no inlined frame), both as the
 *                                innermost frame and as a return address
 *                                (looked up at OFFSET - 1); one per function
 *
 * With "matrix METHODS" after SEED, the same for an Android app (issue 44):
 * Matrix TraceCanary envelopes (bench/matrix_gen.h) to
 * POST /api/v1/ingest/matrix (DAYS > 1: the backfill route with
 * format=matrix), ENVELOPE reports each; report I is element I % ENVELOPE
 * of envelope I / ENVELOPE, whose user, version (build "1"), OS version
 * (Android 11 to 14) and device (6 phones) its elements share. Report I's
 * group g is drawn as above; its heaviest path ends in a pair of method
 * ids (of 1 … METHODS, which the script's uploaded mappings name) distinct
 * for every g, the 3rd and 4th frames from the end vary with the
 * subgroup; kinds 60% slow_method, 15% anr, 15% lag, 5% slow_startup, 5%
 * thread_policy (lag and thread_policy carry only a threadStack, so they
 * group apart from the others). Every 10th envelope adds a Trace_StartUp
 * and a Trace_FPS element (measures, not reports). PROFILE is unused.
 *
 * Bodies are built and gzip'ed in chunks of CHUNK before each chunk's clock
 * starts, so the generator takes little of the machine while the server is
 * timed; reports/s is the accepted reports over the time spent posting.
 * Progress goes to stderr; the result is one JSON object on stdout.
 *
 * usage: dashboard_load HOST PORT AUTH APP PROFILE REPORTS CONCURRENCY DAYS SEED
 *        [matrix METHODS]
 *        (AUTH: the ingest key when DAYS is 1, else the admin token)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "load_net.h"
#include "matrix_gen.h"

#define GROUPS	    10000
#define USERS	    200000
#define MAX_IMAGES  16
#define MAX_FUNCS   4096
#define CHUNK	    50000
#define BODY_MAX    (1 << 18)
#define ENVELOPE    20
#define SYSTEM_UUID "5A5A5A5A-0000-4000-8000-000000000001"
#define SYSTEM_LOAD 0x1f0000000ull
#define NODSYM_UUID "5A5A5A5A-0000-4000-8000-000000000002"
#define NODSYM_LOAD 0x1e0000000ull
#define EXTRA_SIZE  0x400000ull
/* Coprime with any function count below it, so g -> (g * PAIR_STRIDE) mod
 * F^2 sends distinct groups to distinct function pairs. */
#define PAIR_STRIDE 7919u

static const char *const versions[] = {"8.0.0", "8.1.0", "8.2.0", "8.3.0", "8.4.0"};
static const unsigned version_weights[] = {5, 10, 15, 30, 40}; /* percent */
static const char *const os_versions[] = {"16.7.2", "17.1", "17.2", "18.0"};
static const char *const devices[] = {"iPhone12,1", "iPhone13,2", "iPhone14,2",
				      "iPhone15,3", "iPhone16,1", "iPad13,4"};
static const char *const kinds[] = {"stall", "hang", "cpu"};
static const char *const android_os_versions[] = {"11", "12", "13", "14"};
static const char *const android_devices[] = {"Pixel 6",  "Pixel 7",  "SM-S911B",
					      "SM-A546B", "M2101K6G", "CPH2451"};

typedef struct image {
	char uuid[40], name[64];
	uint64_t load, size;
} image;

typedef struct func {
	int image;
	uint64_t offset;
} func;

typedef struct body {
	char path[160];
	unsigned char *gz;
	size_t len;
} body;

typedef struct worker {
	int id;
} worker;

static image images[MAX_IMAGES];
static func funcs[MAX_FUNCS];
static int nimages, nfuncs;
static double zipf_cdf[GROUPS];
static const char *host, *auth, *app;
static int port, days, nworkers;
static uint64_t seed;
static time_t started; /* wall clock at start: "today" and backfill's upper bound */
static long chunk_first, chunk_len;
static body *chunk;
static bl_latencies *lat; /* per worker */
static atomic_long next_body, accepted_total, errors_total, errors_shown;
static pthread_barrier_t ready;
static double chunk_t0;
static uint32_t matrix_methods; /* 0: native reports */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double uniform(uint64_t *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

static void zipf_init(void)
{
	double sum = 0;
	for (int k = 0; k < GROUPS; k++)
		sum += 1.0 / (k + 1);
	double acc = 0;
	for (int k = 0; k < GROUPS; k++) {
		acc += 1.0 / (k + 1) / sum;
		zipf_cdf[k] = acc;
	}
	zipf_cdf[GROUPS - 1] = 1.0;
}

static int zipf_draw(uint64_t *s)
{
	double u = uniform(s);
	int lo = 0, hi = GROUPS - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const char *weighted_version(uint64_t *s)
{
	unsigned r = (unsigned)(rnd(s) % 100), acc = 0;
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
		acc += version_weights[i];
		if (r < acc)
			return versions[i];
	}
	return versions[0];
}

/* Function K's runtime address, as a JSON string into BUF at N. */
static size_t put_func(char *buf, size_t cap, size_t n, uint64_t k, int first)
{
	const func *f = &funcs[k % (uint64_t)nfuncs];
	return n + (size_t)snprintf(buf + n, cap - n, "%s\"0x%llx\"", first ? "" : ",",
				    (unsigned long long)(images[f->image].load + f->offset));
}

static size_t put_addr(char *buf, size_t cap, size_t n, uint64_t addr)
{
	return n + (size_t)snprintf(buf + n, cap - n, ",\"0x%llx\"", (unsigned long long)addr);
}

/* The main thread's frames of a report of group G, subgroup V. */
static size_t put_frames(char *buf, size_t cap, size_t n, uint64_t g, uint64_t v, uint64_t *s)
{
	uint64_t F = (uint64_t)nfuncs, pair = (g * PAIR_STRIDE + 12345) % (F * F);
	uint64_t h = mix(g ^ seed);
	n = put_func(buf, cap, n, pair % F, 1);
	n = put_func(buf, cap, n, pair / F, 0);
	n = put_func(buf, cap, n, h % F + v, 0);
	n = put_func(buf, cap, n, (h >> 20) % F, 0);
	for (int i = 0; i < 4; i++)
		n = put_func(buf, cap, n, mix(h + (uint64_t)i) % F, 0);
	for (int i = 0; i < 3; i++)
		n = put_addr(buf, cap, n,
			     SYSTEM_LOAD + 0x1000 + (mix(h + 10 + (uint64_t)i) % 64) * 0x40);
	if (rnd(s) % 100 < 80)
		n = put_addr(buf, cap, n, NODSYM_LOAD + 0x2000 + (h % 256) * 0x20);
	return put_func(buf, cap, n, 0, 0);
}

static size_t put_images(char *buf, size_t cap, size_t n)
{
	for (int i = 0; i < nimages; i++)
		n += (size_t)snprintf(
			buf + n, cap - n,
			"%s{\"name\":\"%s\",\"uuid\":\"%s\",\"load_address\":\"0x%llx\","
			"\"size\":%llu}",
			i ? "," : "", images[i].name, images[i].uuid,
			(unsigned long long)images[i].load, (unsigned long long)images[i].size);
	n += (size_t)snprintf(
		buf + n, cap - n,
		",{\"name\":\"/usr/lib/system/libsystem_bench.dylib\",\"uuid\":\"%s\","
		"\"load_address\":\"0x%llx\",\"size\":%llu}"
		",{\"name\":\"AdsKit\",\"uuid\":\"%s\",\"load_address\":\"0x%llx\","
		"\"size\":%llu}",
		SYSTEM_UUID, SYSTEM_LOAD, EXTRA_SIZE, NODSYM_UUID, NODSYM_LOAD, EXTRA_SIZE);
	return n;
}

/* The backfill's path (DAYS > 1) for a body of FORMAT drawn with S. */
static void backfill_path(body *b, const char *format, uint64_t *s)
{
	time_t day0 = started - started % 86400 - (time_t)(rnd(s) % (uint64_t)days) * 86400;
	time_t at = day0 + (time_t)(rnd(s) % 86400);
	if (at > started - 60)
		at = started - 60;
	struct tm tm;
	gmtime_r(&at, &tm);
	snprintf(b->path, sizeof b->path,
		 "/api/v1/apps/%s/backfill?received_at=%04d-%02d-%02dT%02d:%02d:%02dZ&format=%s",
		 app, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec, format);
}

/* Report I's JSON into BUF and its request path into B->path. */
static size_t make_report(char *buf, size_t cap, long i, body *b)
{
	uint64_t s = mix(seed * 0x100000001b3ull ^ (uint64_t)i) | 1;
	uint64_t g = (uint64_t)zipf_draw(&s);
	uint64_t nsub = 1 + mix(g + 7) % 4, v = 0;
	while (v + 1 < nsub && rnd(&s) % 2)
		v++;
	size_t n = (size_t)snprintf(
		buf, cap,
		"{\"report_id\":\"dash-%llu-%ld\",\"user_id\":\"user-%llu\",\"app_version\":\"%s\","
		"\"build\":\"1\",\"os\":\"iOS\",\"os_version\":\"%s\",\"device\":\"%s\","
		"\"kind\":\"%s\",\"duration_ms\":%llu,\"images\":[",
		(unsigned long long)seed, i, (unsigned long long)(rnd(&s) % USERS),
		weighted_version(&s), os_versions[rnd(&s) % 4], devices[rnd(&s) % 6],
		kinds[rnd(&s) % 3], (unsigned long long)(250 + rnd(&s) % 5000));
	n = put_images(buf, cap, n);
	n += (size_t)snprintf(buf + n, cap - n,
			      "],\"threads\":[{\"name\":\"main\",\"main\":true,\"frames\":[");
	n = put_frames(buf, cap, n, g, v, &s);
	n += (size_t)snprintf(buf + n, cap - n, "]}]}");
	if (days <= 1)
		snprintf(b->path, sizeof b->path, "/api/v1/ingest");
	else
		backfill_path(b, "native", &s);
	return n;
}

/* Report I as a Matrix element: its kind, group, subgroup and duration. */
static void matrix_report(long i, mg_element *e)
{
	uint64_t s = mix(seed * 0x100000001b3ull ^ (uint64_t)i) | 1;
	uint64_t g = (uint64_t)zipf_draw(&s), M = matrix_methods;
	uint64_t nsub = 1 + mix(g + 7) % 4, v = 0;
	while (v + 1 < nsub && rnd(&s) % 2)
		v++;
	unsigned r = (unsigned)(rnd(&s) % 100);
	mg_kind kind = r < 60	? MG_NORMAL
		       : r < 75 ? MG_ANR
		       : r < 90 ? MG_LAG
		       : r < 95 ? MG_STARTUP
				: MG_PRIORITY;
	*e = (mg_element){.kind = kind,
			  .nchain = 8,
			  .methods = matrix_methods,
			  .as_line = i % 10 == 3,
			  .time_ms = 1700000000000ll + (int64_t)(seed % 1000) * 1000000000ll + i};
	uint64_t pair = (g * PAIR_STRIDE + 12345) % (M * M), h = mix(g ^ seed);
	for (int d = 0; d < 4; d++)
		e->chain[d] = 1 + (uint32_t)(mix(h + (uint64_t)d) % M);
	e->chain[4] = 1 + (uint32_t)((h >> 20) % M);
	e->chain[5] = 1 + (uint32_t)((h % M + v) % M);
	e->chain[6] = 1 + (uint32_t)(pair / M);
	e->chain[7] = 1 + (uint32_t)(pair % M);
	e->cost_ms = e->kind == MG_ANR	     ? 5000 + (int64_t)(rnd(&s) % 1000)
		     : e->kind == MG_STARTUP ? 10000 + (int64_t)(rnd(&s) % 5000)
					     : 700 + (int64_t)(rnd(&s) % 4500);
}

/* Envelope J (reports J * ENVELOPE …) into BUF and its path into B->path. */
static size_t make_envelope(char *buf, size_t cap, long j, body *b)
{
	uint64_t s = mix(seed * 0x9e3779b97f4a7c15ull ^ (uint64_t)j) | 1;
	char user[32];
	snprintf(user, sizeof user, "user-%llu", (unsigned long long)(rnd(&s) % USERS));
	const char *version = weighted_version(&s);
	const char *os = android_os_versions[rnd(&s) % 4], *device = android_devices[rnd(&s) % 6];
	size_t n = mg_put_envelope_head(buf, cap, version, "1", user, os, device);
	int elements = ENVELOPE + (j % 10 == 0 ? 2 : 0);
	for (int k = 0; k < elements && n < cap; k++) {
		mg_element e;
		matrix_report(j * ENVELOPE + (k < ENVELOPE ? k : 0), &e);
		if (k >= ENVELOPE) {
			e.kind = k == ENVELOPE ? MG_TRACE_STARTUP : MG_TRACE_FPS;
			e.cost_ms = 800 + (int64_t)(rnd(&s) % 3000);
			e.time_ms += 1000000000ll + k;
			e.as_line = 0;
		}
		if (k)
			buf[n++] = ',';
		n += mg_put_element(buf + n, cap - n, &e, &s);
	}
	n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "]}");
	if (days <= 1)
		snprintf(b->path, sizeof b->path, "/api/v1/ingest/matrix");
	else
		backfill_path(b, "matrix", &s);
	return n;
}

static void build_body(long i, char *json, z_stream *z, body *b)
{
	size_t len = matrix_methods ? make_envelope(json, BODY_MAX, i, b)
				    : make_report(json, BODY_MAX, i, b);
	if (len >= BODY_MAX) {
		fprintf(stderr, "dashboard_load: a body over %d bytes\n", BODY_MAX);
		exit(1);
	}
	unsigned char gz[BODY_MAX];
	b->len = bl_gzip(z, json, len, gz, sizeof gz);
	b->gz = malloc(b->len);
	memcpy(b->gz, gz, b->len);
}

/* Posts B on *FD (reconnecting after a failure) and counts the answer. */
static void post(worker *w, int *fd, const body *b, char *head, char *resp)
{
	int hl =
		snprintf(head, 1024,
			 "POST %s HTTP/1.1\r\nHost: %s\r\n%s%s\r\n"
			 "Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
			 "Content-Length: %zu\r\n\r\n",
			 b->path, host, days <= 1 ? "X-Stallscope-Key: " : "Authorization: Bearer ",
			 auth, b->len);
	double t0 = bl_now();
	int status = bl_write_all(*fd, head, (size_t)hl) || bl_write_all(*fd, b->gz, b->len)
			     ? -1
			     : bl_read_response(*fd, resp, 1 << 16);
	bl_latencies_add(&lat[w->id], bl_now() - t0);
	if (status == 202) {
		atomic_fetch_add(&accepted_total, matrix_methods ? bl_count_accepted(resp) : 1);
		return;
	}
	atomic_fetch_add(&errors_total, 1);
	if (atomic_fetch_add(&errors_shown, 1) < 5)
		fprintf(stderr, "dashboard_load: status %d: %.200s\n", status, resp);
	if (status < 0) {
		close(*fd);
		*fd = bl_connect(host, port);
	}
}

static void *run_chunk(void *arg)
{
	worker *w = arg;
	char *json = malloc(BODY_MAX), *head = malloc(1024), *resp = malloc(1 << 16);
	z_stream z;
	bl_gzip_open(&z);
	for (long i = w->id; i < chunk_len; i += nworkers)
		build_body(chunk_first + i, json, &z, &chunk[i]);
	int fd = bl_connect(host, port);
	if (pthread_barrier_wait(&ready) == PTHREAD_BARRIER_SERIAL_THREAD)
		chunk_t0 = bl_now();
	pthread_barrier_wait(&ready);
	for (long i; fd >= 0 && (i = atomic_fetch_add(&next_body, 1)) < chunk_len;)
		post(w, &fd, &chunk[i], head, resp);
	if (fd >= 0)
		close(fd);
	deflateEnd(&z);
	free(json);
	free(head);
	free(resp);
	return NULL;
}

static int read_profile(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char kind[16];
	while (fscanf(f, "%15s", kind) == 1) {
		if (!strcmp(kind, "image") && nimages < MAX_IMAGES) {
			image *im = &images[nimages++];
			if (fscanf(f, "%39s %63s %llx %llx", im->uuid, im->name,
				   (unsigned long long *)&im->load,
				   (unsigned long long *)&im->size) != 4)
				break;
		} else if (!strcmp(kind, "func") && nfuncs < MAX_FUNCS) {
			func *fn = &funcs[nfuncs++];
			if (fscanf(f, "%d %llx", &fn->image, (unsigned long long *)&fn->offset) !=
			    2)
				break;
		}
	}
	fclose(f);
	if (nimages == 0 || nfuncs < 100 || (uint64_t)nfuncs * (uint64_t)nfuncs < GROUPS) {
		fprintf(stderr, "%s: %d images, %d functions: too few for %d groups\n", path,
			nimages, nfuncs, GROUPS);
		return -1;
	}
	return 0;
}

/* Builds and posts reports [FIRST, FIRST + LEN) with W's threads; returns
 * the seconds spent posting. */
static double load_chunk(worker *w, pthread_t *t, long first, long len)
{
	chunk_first = first;
	chunk_len = len;
	atomic_store(&next_body, 0);
	for (int i = 0; i < nworkers; i++)
		pthread_create(&t[i], NULL, run_chunk, &w[i]);
	for (int i = 0; i < nworkers; i++)
		pthread_join(t[i], NULL);
	double took = bl_now() - chunk_t0;
	for (long i = 0; i < len; i++)
		free(chunk[i].gz);
	return took;
}

static void print_result(long reports, double posting, double wall)
{
	size_t total;
	double *all = bl_latencies_merge(lat, nworkers, &total);
	long accepted = atomic_load(&accepted_total);
	printf("{\"reports\":%ld,\"requests\":%zu,\"accepted\":%ld,\"errors\":%ld,"
	       "\"posting_seconds\":%.2f,\"wall_seconds\":%.2f,\"reports_per_second\":%.1f,"
	       "\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f,\"functions\":%d,\"images\":%d}\n",
	       reports, total, accepted, atomic_load(&errors_total), posting, wall,
	       posting > 0 ? (double)accepted / posting : 0, total ? all[total / 2] * 1e3 : 0,
	       total ? all[total * 99 / 100] * 1e3 : 0, total ? all[total - 1] * 1e3 : 0, nfuncs,
	       nimages);
	free(all);
}

int main(int argc, char **argv)
{
	if (argc != 10 && !(argc == 12 && !strcmp(argv[10], "matrix") && atol(argv[11]) > 0)) {
		fprintf(stderr, "usage: dashboard_load HOST PORT AUTH APP PROFILE REPORTS "
				"CONCURRENCY DAYS SEED [matrix METHODS]\n");
		return 2;
	}
	if (argc == 12)
		matrix_methods = (uint32_t)atol(argv[11]);
	host = argv[1];
	port = atoi(argv[2]);
	auth = argv[3];
	app = argv[4];
	if (!matrix_methods && read_profile(argv[5]) != 0)
		return 1;
	long reports = atol(argv[6]);
	nworkers = atoi(argv[7]);
	days = atoi(argv[8]);
	seed = strtoull(argv[9], NULL, 10);
	started = time(NULL);
	zipf_init();
	chunk = calloc(CHUNK, sizeof *chunk);
	worker *w = calloc((size_t)nworkers, sizeof *w);
	pthread_t *t = calloc((size_t)nworkers, sizeof *t);
	lat = calloc((size_t)nworkers, sizeof *lat);
	pthread_barrier_init(&ready, NULL, (unsigned)nworkers);
	double posting = 0, wall0 = bl_now();
	for (int i = 0; i < nworkers; i++)
		w[i].id = i;
	/* A body is a report, or an envelope of ENVELOPE of them. */
	long per_body = matrix_methods ? ENVELOPE : 1, bodies = (reports + per_body - 1) / per_body;
	long per_chunk = CHUNK / per_body;
	for (long first = 0; first < bodies; first += per_chunk) {
		long len = bodies - first < per_chunk ? bodies - first : per_chunk;
		posting += load_chunk(w, t, first, len);
		fprintf(stderr, "  %ld/%ld reports posted, %.0f reports/s so far, %ld errors\n",
			(first + len) * per_body, reports, atomic_load(&accepted_total) / posting,
			atomic_load(&errors_total));
	}
	print_result(reports, posting, bl_now() - wall0);
	free(chunk);
	free(lat);
	free(w);
	free(t);
	return atomic_load(&errors_total) ? 1 : 0;
}
