/* workers.c — the job pool; see workers.h. */
#include "server/service/workers.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/log.h"

typedef struct job {
	void (*fn)(void *cls);
	void *cls;
	struct job *next;
} job;

struct srv_workers {
	pthread_mutex_t lock;
	pthread_cond_t ready;
	job *head, *tail;
	bool stopping;
	unsigned n;
	pthread_t *threads;
};

static void *run(void *arg)
{
	srv_workers *w = arg;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->ready, &w->lock);
		job *j = w->head;
		if (!j)
			break; /* stopping and drained */
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		j->fn(j->cls);
		free(j);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

srv_workers *srv_workers_start(unsigned n)
{
	srv_workers *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->threads = calloc(n, sizeof *w->threads);
	if (!w->threads) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->ready, NULL);
	for (; w->n < n; w->n++) {
		if (pthread_create(&w->threads[w->n], NULL, run, w) != 0) {
			cm_log(CM_ERROR, "workers: cannot start thread %u",
			       w->n);
			srv_workers_stop(w);
			srv_workers_free(w);
			return NULL;
		}
	}
	return w;
}

bool srv_workers_submit(srv_workers *w, void (*fn)(void *cls), void *cls)
{
	job *j = malloc(sizeof *j);
	if (!j)
		return false;
	j->fn = fn;
	j->cls = cls;
	j->next = NULL;
	pthread_mutex_lock(&w->lock);
	bool ok = !w->stopping;
	if (ok) {
		if (w->tail)
			w->tail->next = j;
		else
			w->head = j;
		w->tail = j;
		pthread_cond_signal(&w->ready);
	}
	pthread_mutex_unlock(&w->lock);
	if (!ok)
		free(j);
	return ok;
}

void srv_workers_stop(srv_workers *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->ready);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->n; i++)
		pthread_join(w->threads[i], NULL);
	w->n = 0;
}

void srv_workers_free(srv_workers *w)
{
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->ready);
	free(w->threads);
	free(w);
}
