/*
 * workers.h — a small fixed pool of threads running slow jobs (symcache
 * builds) off the HTTP threads, FIFO.
 */
#ifndef STALLSCOPE_SERVER_WORKERS_H
#define STALLSCOPE_SERVER_WORKERS_H

#include <stdbool.h>

typedef struct srv_workers srv_workers;

/* Starts N threads; NULL when they cannot be created. */
srv_workers *srv_workers_start(unsigned n);

/*
 * Queues FN(CLS). Returns false, without running it, once srv_workers_stop
 * has begun; the caller still owns CLS then.
 */
bool srv_workers_submit(srv_workers *w, void (*fn)(void *cls), void *cls);

/*
 * Refuses new jobs, runs every queued one and joins the threads. W stays
 * valid (refusing jobs) until srv_workers_free, so threads that may still
 * submit are safe.
 */
void srv_workers_stop(srv_workers *w);

/* Frees a stopped W. */
void srv_workers_free(srv_workers *w);

#endif
