/*
 * sampling_load.c — load generator for bench/sampling.sh: CONCURRENCY
 * threads, each on one kept-alive HTTP/1.1 connection, ask
 * GET /api/v1/sampling?user_id=U&app_version=V&os_version=O&device=D for
 * SECONDS and time every request. Users are USERS distinct ids taken in
 * turn (so each is asked about as often as the run allows: a day of
 * devices compressed), over three versions, four OS versions and six
 * devices, as the native client asks (issue 42; a build before it ignores
 * the last two).
 *
 * Prints one JSON object: requests, ok (200), errors, seconds,
 * requests/s, p50/p99/max latency in ms.
 *
 * usage: sampling_load HOST PORT INGEST_KEY SECONDS CONCURRENCY USERS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "load_net.h"

static const char *host, *key;
static int port;
static double seconds_to_run, deadline;
static long users;
static atomic_long next_user, ok_total, errors_total;
static pthread_barrier_t ready;

static void *run(void *arg)
{
	bl_latencies *w = arg;
	char req[512], resp[8192];
	int fd = bl_connect(host, port);
	if (pthread_barrier_wait(&ready) == PTHREAD_BARRIER_SERIAL_THREAD)
		deadline = bl_now() + seconds_to_run;
	pthread_barrier_wait(&ready);
	while (bl_now() < deadline && fd >= 0) {
		long u = atomic_fetch_add(&next_user, 1) % users;
		int len = snprintf(req, sizeof req,
				   "GET /api/v1/sampling?user_id=device-%ld&app_version=2.%ld"
				   "&os_version=17.%ld&device=iPhone1%ld,2 HTTP/1.1"
				   "\r\nHost: %s\r\nX-Stallscope-Key: %s\r\n\r\n",
				   u, u % 3, u % 4, u % 6, host, key);
		double t0 = bl_now();
		int status = bl_write_all(fd, req, (size_t)len)
				     ? -1
				     : bl_read_response(fd, resp, sizeof resp);
		double dt = bl_now() - t0;
		atomic_fetch_add(status == 200 ? &ok_total : &errors_total, 1);
		if (status < 0) {
			close(fd);
			fd = bl_connect(host, port);
		}
		bl_latencies_add(w, dt);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 7) {
		fprintf(stderr, "usage: sampling_load HOST PORT INGEST_KEY SECONDS CONCURRENCY "
				"USERS\n");
		return 2;
	}
	host = argv[1];
	port = atoi(argv[2]);
	key = argv[3];
	seconds_to_run = atof(argv[4]);
	int threads = atoi(argv[5]);
	users = atol(argv[6]);
	bl_latencies *w = calloc((size_t)threads, sizeof *w);
	pthread_t *t = calloc((size_t)threads, sizeof *t);
	pthread_barrier_init(&ready, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, &w[i]);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	double elapsed = seconds_to_run + (bl_now() - deadline);
	size_t total;
	double *all = bl_latencies_merge(w, threads, &total);
	printf("{\"requests\":%zu,\"ok\":%ld,\"errors\":%ld,\"seconds\":%.2f,"
	       "\"requests_per_second\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f}\n",
	       total, atomic_load(&ok_total), atomic_load(&errors_total), elapsed,
	       (double)atomic_load(&ok_total) / elapsed, total ? all[total / 2] * 1e3 : 0,
	       total ? all[total * 99 / 100] * 1e3 : 0, total ? all[total - 1] * 1e3 : 0);
	free(all);
	free(w);
	free(t);
	return 0;
}
