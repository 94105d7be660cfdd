/*
 * load_net.c — the load generators' shared plumbing; see load_net.h.
 */
#define _GNU_SOURCE
#include "load_net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double bl_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int bl_connect(const char *host, int port)
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

int bl_write_all(int fd, const void *p, size_t n)
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

int bl_read_response(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	char *end = NULL;
	while (!(end = memmem(buf, n, "\r\n\r\n", 4))) {
		if (n + 1 >= cap)
			return -1;
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
	/* A body that fits is kept after the headers (NUL-terminated), for
	 * callers that count what a reply lists; a longer one is dropped. */
	int keep = n - have + body < cap;
	while (have < body) {
		ssize_t r = keep ? read(fd, buf + n, cap - n - 1) : read(fd, buf, cap);
		if (r <= 0)
			return -1;
		have += (size_t)r;
		if (keep)
			buf[n += (size_t)r] = '\0';
	}
	return status;
}

long bl_count_accepted(const char *resp)
{
	const char *p = strstr(resp, "\"accepted\":["), *end;
	if (!p || !(end = strchr(p, ']')))
		return 0;
	long n = 0;
	/* A report's entry has its "id"; a measure's has none. */
	for (; (p = strstr(p + 1, "\"id\":")) && p < end; n++)
		;
	return n;
}

void bl_gzip_open(z_stream *z)
{
	memset(z, 0, sizeof *z);
	deflateInit2(z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

size_t bl_gzip(z_stream *z, const char *in, size_t len, unsigned char *out, size_t cap)
{
	deflateReset(z);
	z->next_in = (unsigned char *)(uintptr_t)in;
	z->avail_in = (uInt)len;
	z->next_out = out;
	z->avail_out = (uInt)cap;
	deflate(z, Z_FINISH);
	return z->total_out;
}

void bl_latencies_add(bl_latencies *l, double seconds)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->s = realloc(l->s, l->cap * sizeof *l->s);
	}
	l->s[l->n++] = seconds;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double *bl_latencies_merge(bl_latencies *ls, int count, size_t *out_n)
{
	size_t total = 0, k = 0;
	for (int i = 0; i < count; i++)
		total += ls[i].n;
	double *all = malloc((total ? total : 1) * sizeof *all);
	for (int i = 0; i < count; i++) {
		memcpy(all + k, ls[i].s, ls[i].n * sizeof *all);
		k += ls[i].n;
		free(ls[i].s);
		ls[i] = (bl_latencies){NULL, 0, 0};
	}
	qsort(all, total, sizeof *all, cmp_double);
	*out_n = total;
	return all;
}
