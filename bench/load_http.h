/*
 * load_http.h — what the load generators (ingest_load.c, sampling_load.c)
 * share: a kept-alive HTTP/1.1 connection, one response read, and the
 * latencies of a run. Header-only: each generator is one `cc` command.
 *
 * Memory: a load_lat's array is its own, freed by load_summary.
 */
#ifndef STALLSCOPE_BENCH_LOAD_HTTP_H
#define STALLSCOPE_BENCH_LOAD_HTTP_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A connection to HOST (dotted IPv4):PORT without Nagle; -1 on failure. */
static int load_connect(const char *host, int port)
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

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads one response (headers, then a Content-Length body, discarded);
 * returns its status or -1. */
static int read_response(int fd, char *buf, size_t cap)
{
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
	size_t have = n - (size_t)(end + 4 - buf);
	while (have < body) {
		ssize_t r = read(fd, buf, cap);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return status;
}

/* One connection's request latencies, in seconds. */
typedef struct load_lat {
	double *lat;
	size_t n, cap;
} load_lat;

static void load_lat_add(load_lat *l, double seconds)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->lat = realloc(l->lat, l->cap * sizeof *l->lat);
	}
	l->lat[l->n++] = seconds;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The N connections' latencies merged: p50, p99 and max in ms into
 * OUT_MS[3]; frees each array. Returns the number of requests. */
static size_t load_summary(load_lat *const *lats, int n, double out_ms[3])
{
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += lats[i]->n;
	double *all = malloc((total ? total : 1) * sizeof *all);
	for (size_t i = 0, k = 0; i < (size_t)n; k += lats[i]->n, i++) {
		memcpy(all + k, lats[i]->lat, lats[i]->n * sizeof *all);
		free(lats[i]->lat);
	}
	qsort(all, total, sizeof *all, cmp_double);
	out_ms[0] = total ? all[total / 2] * 1e3 : 0;
	out_ms[1] = total ? all[total * 99 / 100] * 1e3 : 0;
	out_ms[2] = total ? all[total - 1] * 1e3 : 0;
	free(all);
	return total;
}

#endif
