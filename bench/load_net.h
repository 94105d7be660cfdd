/*
 * load_net.h — what bench/ingest_load.c and bench/dashboard_load.c share:
 * a monotonic clock, one kept-alive HTTP/1.1 connection to the server,
 * reading a response whole, gzip through a stream kept per thread, and
 * request latencies. Callers own every buffer they pass; a bl_latencies
 * owns its array until bl_latencies_merge takes it.
 */
#ifndef BENCH_LOAD_NET_H
#define BENCH_LOAD_NET_H

#include <stddef.h>
#include <zlib.h>

/* Seconds on the monotonic clock. */
double bl_now(void);

/* A TCP connection (TCP_NODELAY) to HOST (dotted IPv4):PORT; -1 on failure. */
int bl_connect(const char *host, int port);

/* Writes all N bytes of P to FD; 0, or -1 when the connection failed. */
int bl_write_all(int fd, const void *p, size_t n);

/* Reads one response into BUF of CAP bytes, NUL-terminated: its headers,
 * and its body after them when it fits (else the body is read and
 * dropped); returns its status, or -1 when the connection failed. */
int bl_read_response(int fd, char *buf, size_t cap);

/* How many reports the ingest reply RESP (as bl_read_response leaves it)
 * lists under "accepted" (a Matrix measure there is not one); 0 when it
 * holds no such list. */
long bl_count_accepted(const char *resp);

/* Opens Z for bl_gzip (deflateEnd closes it). */
void bl_gzip_open(z_stream *z);

/* IN (LEN bytes) gzip'ed into OUT (CAP bytes) with Z, opened by
 * bl_gzip_open and reused: a fresh stream per body would allocate and
 * clear deflate's window every time. Returns the compressed length. */
size_t bl_gzip(z_stream *z, const char *in, size_t len, unsigned char *out, size_t cap);

/* One thread's request latencies, in seconds; zero-initialized is empty. */
typedef struct bl_latencies {
	double *s;
	size_t n, cap;
} bl_latencies;

/* Appends SECONDS to L (the array grows by doubling). */
void bl_latencies_add(bl_latencies *l, double seconds);

/* The COUNT arrays of LS in one sorted array (malloc, the caller frees),
 * its length in *OUT_N; frees and empties every LS[i]. */
double *bl_latencies_merge(bl_latencies *ls, int count, size_t *out_n);

#endif
