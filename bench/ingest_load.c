/*
 * ingest_load.c — load generator for bench/ingest.sh: CONCURRENCY threads,
 * each on one kept-alive HTTP/1.1 connection, post gzip'ed native reports
 * to POST /api/v1/ingest for SECONDS and time every request.
 *
 * A report has 30 frames over 10 images (the images of PROFILE, a file of
 * "UUID LOAD TEXT_OFFSET TEXT_SIZE" lines, whose dSYMs the script uploaded
 * so their symcaches are warm), and 5% of its frames in no listed image.
 * Every report has a fresh report_id (unique across runs) and one of
 * 100,000 users.
 *
 * Bodies are built and compressed before the clock starts (POOL_PER_SECOND
 * for each second of the run, shared by all connections, which take the
 * next one in turn; built live once the pool runs out), so the generator
 * takes as little of the machine's CPU from the server as pgbench's client
 * takes from PostgreSQL.
 *
 * With "matrix METHODS" after the usual arguments it posts Matrix
 * TraceCanary envelopes to POST /api/v1/ingest/matrix instead (PROFILE is
 * then unused): ENVELOPE elements each, of every kind (bench/matrix_gen.h;
 * 2 of them Issue.toString() lines, 2 measures), 30-line stacks whose
 * method ids 1 … METHODS the script's uploaded mapping names; one user
 * and one of 3 versions per envelope (build "bench").
 *
 * Prints one JSON object: requests, accepted (reports the replies list as
 * accepted), errors, seconds, reports/s, p50/p99/max latency in ms (per
 * request: an envelope holds ENVELOPE reports).
 *
 * usage: ingest_load HOST PORT INGEST_KEY PROFILE SECONDS CONCURRENCY
 *        [matrix METHODS]
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

#define FRAMES 30
#define MAX_IMAGES 10
#define UNKNOWN_PERMILLE 50
/* Bodies per second of the run: above any rate this server reaches on the
 * machines we measure, so none is built while the clock runs. */
#define POOL_PER_SECOND 10000
#define BODY_MAX	(1 << 18)
#define ENVELOPE	20

typedef struct image {
	char uuid[40];
	uint64_t load, text_off, text_size;
} image;

static image images[MAX_IMAGES];
static int nimages;
static const char *host, *key;
static int port;
static double seconds_to_run, deadline;
static unsigned long long run_nonce;
static atomic_long accepted_total, errors_total, built_live, pool_next;
static int nworkers;
static long pool_size;
static pthread_barrier_t ready;
static uint32_t matrix_methods; /* 0: native reports */
/* One envelope's elements: Matrix's kinds as a production app sends them,
 * slow methods most. */
static const mg_kind envelope_kinds[ENVELOPE] = {
	MG_NORMAL,    MG_NORMAL,  MG_NORMAL,	 MG_NORMAL,	   MG_NORMAL,
	MG_NORMAL,    MG_NORMAL,  MG_NORMAL,	 MG_NORMAL,	   MG_ANR,
	MG_ANR,	      MG_ANR,	  MG_SIGNAL_ANR, MG_LAG,	   MG_LAG,
	MG_LAG_TOUCH, MG_STARTUP, MG_PRIORITY,	 MG_TRACE_STARTUP, MG_TRACE_FPS,
};

typedef struct body {
	unsigned char *gz;
	size_t len;
} body;

typedef struct worker {
	int id;
} worker;

static body *pool;
static bl_latencies *lat; /* per worker */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The JSON of one report into BUF; returns its length. */
static size_t make_report(char *buf, size_t cap, int worker_id, long seq, uint64_t *rng)
{
	size_t n = (size_t)snprintf(buf, cap,
		"{\"report_id\":\"bench-%llx-%d-%ld\",\"user_id\":\"user-%llu\","
		"\"app_version\":\"8.0.%llu\",\"os\":\"iOS\",\"os_version\":\"17.2\","
		"\"device\":\"iPhone14,2\",\"kind\":\"stall\",\"duration_ms\":%llu,\"images\":[",
		run_nonce, worker_id, seq, (unsigned long long)(rnd(rng) % 100000), (unsigned long long)(rnd(rng) % 3),
		(unsigned long long)(2000 + rnd(rng) % 5000));
	for (int i = 0; i < nimages; i++)
		n += (size_t)snprintf(buf + n, cap - n,
				      "%s{\"name\":\"Image%d\",\"uuid\":\"%s\",\"load_address\":"
				      "\"0x%llx\",\"size\":%llu}",
				      i ? "," : "", i, images[i].uuid,
				      (unsigned long long)images[i].load,
				      (unsigned long long)(images[i].text_off + images[i].text_size));
	n += (size_t)snprintf(buf + n, cap - n, "],\"threads\":[{\"name\":\"main\",\"main\":true,"
					       "\"frames\":[");
	/* A few distinct stalls, so groups fill up as in production. */
	uint64_t stall = rnd(rng) % 200;
	for (int f = 0; f < FRAMES; f++) {
		uint64_t addr;
		if (rnd(rng) % 1000 < UNKNOWN_PERMILLE) {
			addr = 0x7f0000000000ull + (rnd(rng) % 0x100000);
		} else {
			const image *im = &images[(stall + (uint64_t)f) % (uint64_t)nimages];
			uint64_t off = (stall * 7919 + (uint64_t)f * 104729) % im->text_size;
			addr = im->load + im->text_off + (off & ~3ull);
		}
		n += (size_t)snprintf(buf + n, cap - n, "%s\"0x%llx\"", f ? "," : "",
				      (unsigned long long)addr);
	}
	n += (size_t)snprintf(buf + n, cap - n, "]}]}");
	return n;
}

/* Envelope SEQ of worker W: ENVELOPE elements of 200 distinct stalls,
 * each a heaviest path of 8 methods; "time" makes every element new. */
static size_t make_envelope(char *buf, size_t cap, int worker_id, long seq, uint64_t *rng)
{
	char user[32], version[16];
	snprintf(user, sizeof user, "user-%llu", (unsigned long long)(rnd(rng) % 100000));
	snprintf(version, sizeof version, "8.0.%llu", (unsigned long long)(rnd(rng) % 3));
	size_t n = mg_put_envelope_head(buf, cap, version, "bench", user, "14", "Pixel 7");
	for (int i = 0; i < ENVELOPE && n < cap; i++) {
		mg_element e = {.kind = envelope_kinds[i],
				.nchain = 8,
				.methods = matrix_methods,
				.as_line = i == 0 || i == 13};
		uint64_t stall = rnd(rng) % 200;
		for (int d = 0; d < e.nchain; d++)
			e.chain[d] = 1 + (uint32_t)((stall * 7919 + (uint64_t)d * 104729) %
						    matrix_methods);
		e.cost_ms = e.kind == MG_ANR		 ? 5000 + (int64_t)(rnd(rng) % 1000)
			    : e.kind == MG_STARTUP	 ? 10000 + (int64_t)(rnd(rng) % 5000)
			    : e.kind == MG_TRACE_STARTUP ? 800 + (int64_t)(rnd(rng) % 3000)
							 : 700 + (int64_t)(rnd(rng) % 4000);
		e.time_ms = (int64_t)(run_nonce >> 16) * 1000 + ((int64_t)seq * ENVELOPE + i) * 64 +
			    worker_id;
		if (i)
			buf[n++] = ',';
		n += mg_put_element(buf + n, cap - n, &e, rng);
	}
	n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, "]}");
	return n;
}

/* Report SEQ of worker W, gzip'ed into B (malloc). */
static void build_body(const worker *w, long seq, uint64_t *rng, char *json, z_stream *z,
		       body *b)
{
	size_t len = matrix_methods ? make_envelope(json, BODY_MAX, w->id, seq, rng)
				    : make_report(json, BODY_MAX, w->id, seq, rng);
	if (len >= BODY_MAX) {
		fprintf(stderr, "ingest_load: a body over %d bytes\n", BODY_MAX);
		exit(1);
	}
	unsigned char gz[BODY_MAX];
	b->len = bl_gzip(z, json, len, gz, sizeof gz);
	b->gz = malloc(b->len);
	memcpy(b->gz, gz, b->len);
}

static void *run(void *arg)
{
	worker *w = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(w->id + 1);
	char *json = malloc(BODY_MAX), *head = malloc(1024), *resp = malloc(1 << 16);
	z_stream z;
	bl_gzip_open(&z);
	/* Each worker builds its share of the pool (ids unique per worker). */
	for (long i = w->id; i < pool_size; i += nworkers)
		build_body(w, i, &rng, json, &z, &pool[i]);
	int fd = bl_connect(host, port);
	if (pthread_barrier_wait(&ready) == PTHREAD_BARRIER_SERIAL_THREAD)
		deadline = bl_now() + seconds_to_run;
	pthread_barrier_wait(&ready);
	body live = {NULL, 0};
	long seq = pool_size; /* ids of live bodies follow the pool's */
	while (bl_now() < deadline && fd >= 0) {
		const body *b;
		long next = atomic_fetch_add(&pool_next, 1);
		if (next < pool_size) {
			b = &pool[next];
		} else {
			free(live.gz);
			build_body(w, seq++, &rng, json, &z, &live);
			atomic_fetch_add(&built_live, 1);
			b = &live;
		}
		int hl = snprintf(
			head, 1024,
			"POST /api/v1/ingest%s HTTP/1.1\r\nHost: %s\r\nX-Stallscope-Key: %s\r\n"
			"Content-Type: application/json\r\nContent-Encoding: gzip\r\n"
			"Content-Length: %zu\r\n\r\n",
			matrix_methods ? "/matrix" : "", host, key, b->len);
		double t0 = bl_now();
		int status = bl_write_all(fd, head, (size_t)hl) || bl_write_all(fd, b->gz, b->len)
				     ? -1
				     : bl_read_response(fd, resp, 1 << 16);
		double dt = bl_now() - t0;
		if (status == 202) {
			atomic_fetch_add(&accepted_total,
					 matrix_methods ? bl_count_accepted(resp) : 1);
		} else {
			atomic_fetch_add(&errors_total, 1);
			if (status < 0) {
				close(fd);
				fd = bl_connect(host, port);
			}
		}
		bl_latencies_add(&lat[w->id], dt);
	}
	if (fd >= 0)
		close(fd);
	free(live.gz);
	deflateEnd(&z);
	free(json);
	free(head);
	free(resp);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 7 && !(argc == 9 && !strcmp(argv[7], "matrix") && atol(argv[8]) > 0)) {
		fprintf(stderr, "usage: ingest_load HOST PORT INGEST_KEY PROFILE SECONDS "
				"CONCURRENCY [matrix METHODS]\n");
		return 2;
	}
	if (argc == 9)
		matrix_methods = (uint32_t)atol(argv[8]);
	host = argv[1];
	port = atoi(argv[2]);
	key = argv[3];
	FILE *f = fopen(argv[4], "r");
	if (!f) {
		perror(argv[4]);
		return 1;
	}
	while (nimages < MAX_IMAGES &&
	       fscanf(f, "%39s %llx %llx %llx", images[nimages].uuid,
		      (unsigned long long *)&images[nimages].load,
		      (unsigned long long *)&images[nimages].text_off,
		      (unsigned long long *)&images[nimages].text_size) == 4)
		nimages++;
	fclose(f);
	if (nimages == 0) {
		fprintf(stderr, "no images in %s\n", argv[4]);
		return 1;
	}
	seconds_to_run = atof(argv[5]);
	int threads = atoi(argv[6]);
	nworkers = threads;
	pool_size = (long)(seconds_to_run * POOL_PER_SECOND / (matrix_methods ? ENVELOPE : 1)) + 1;
	pool = calloc((size_t)pool_size, sizeof *pool);
	run_nonce = (unsigned long long)time(NULL) << 16 ^ (unsigned long long)getpid();
	worker *w = calloc((size_t)threads, sizeof *w);
	pthread_t *t = calloc((size_t)threads, sizeof *t);
	lat = calloc((size_t)threads, sizeof *lat);
	pthread_barrier_init(&ready, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		w[i].id = i;
		pthread_create(&t[i], NULL, run, &w[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double elapsed = seconds_to_run + (bl_now() - deadline);
	size_t total;
	double *all = bl_latencies_merge(lat, threads, &total);
	free(lat);
	printf("{\"requests\":%zu,\"accepted\":%ld,\"errors\":%ld,\"built_live\":%ld,"
	       "\"seconds\":%.2f,\"reports_per_second\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,"
	       "\"max_ms\":%.2f}\n",
	       total, atomic_load(&accepted_total), atomic_load(&errors_total),
	       atomic_load(&built_live), elapsed,
	       (double)atomic_load(&accepted_total) / elapsed,
	       total ? all[total / 2] * 1e3 : 0, total ? all[total * 99 / 100] * 1e3 : 0,
	       total ? all[total - 1] * 1e3 : 0);
	free(all);
	for (long i = 0; i < pool_size; i++)
		free(pool[i].gz);
	free(pool);
	free(w);
	free(t);
	return 0;
}
