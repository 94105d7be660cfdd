/*
 * sampling_load.c — load generator for bench/sampling.sh: CONCURRENCY
 * threads, each on one kept-alive HTTP/1.1 connection, ask
 * GET /api/v1/sampling?user_id=U&app_version=V for SECONDS and time every
 * request. Users are USERS distinct ids taken in turn (so each is asked
 * about as often as the run allows: a day of devices compressed), over
 * three versions.
 *
 * Prints one JSON object: requests, ok (200), errors, seconds,
 * requests/s, p50/p99/max latency in ms.
 *
 * usage: sampling_load HOST PORT INGEST_KEY SECONDS CONCURRENCY USERS
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char *host, *key;
static int port;
static double seconds_to_run, deadline;
static long users;
static atomic_long next_user, ok_total, errors_total;
static pthread_barrier_t ready;

typedef struct worker {
	double *lat;
	size_t n, cap;
} worker;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_server(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, host, &a.sin_addr);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends REQ and reads one response (headers and Content-Length body);
 * returns its status or -1. */
static int exchange(int fd, const char *req, size_t len, char *buf, size_t cap)
{
	if (write(fd, req, len) != (ssize_t)len)
		return -1;
	size_t n = 0;
	char *end = NULL;
	while (!(end = memmem(buf, n, "\r\n\r\n", 4))) {
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r <= 0)
			return -1;
		n += (size_t)r;
	}
	buf[n] = '\0';
	int status = atoi(buf + 9);
	char *cl = strcasestr(buf, "content-length:");
	size_t body = cl ? (size_t)atol(cl + 15) : 0;
	for (size_t have = n - (size_t)(end + 4 - buf); have < body;) {
		ssize_t r = read(fd, buf, cap);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return status;
}

static void *run(void *arg)
{
	worker *w = arg;
	char req[512], resp[8192];
	int fd = connect_server();
	if (pthread_barrier_wait(&ready) == PTHREAD_BARRIER_SERIAL_THREAD)
		deadline = now() + seconds_to_run;
	pthread_barrier_wait(&ready);
	while (now() < deadline && fd >= 0) {
		long u = atomic_fetch_add(&next_user, 1) % users;
		int len = snprintf(
			req, sizeof req,
			"GET /api/v1/sampling?user_id=device-%ld&app_version=2.%ld HTTP/1.1"
			"\r\nHost: %s\r\nX-Stallscope-Key: %s\r\n\r\n",
			u, u % 3, host, key);
		double t0 = now();
		int status = exchange(fd, req, (size_t)len, resp, sizeof resp);
		double dt = now() - t0;
		atomic_fetch_add(status == 200 ? &ok_total : &errors_total, 1);
		if (status < 0) {
			close(fd);
			fd = connect_server();
		}
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 4096;
			w->lat = realloc(w->lat, w->cap * sizeof *w->lat);
		}
		w->lat[w->n++] = dt;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
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
	worker *w = calloc((size_t)threads, sizeof *w);
	pthread_t *t = calloc((size_t)threads, sizeof *t);
	pthread_barrier_init(&ready, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, run, &w[i]);
	size_t total = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		total += w[i].n;
	}
	double elapsed = seconds_to_run + (now() - deadline);
	double *all = malloc((total ? total : 1) * sizeof *all);
	for (size_t i = 0, k = 0; i < (size_t)threads; k += w[i].n, i++) {
		memcpy(all + k, w[i].lat, w[i].n * sizeof *all);
		free(w[i].lat);
	}
	qsort(all, total, sizeof *all, cmp_double);
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
