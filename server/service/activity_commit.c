/*
 * activity_commit.c — group commit of sampling check-ins; see
 * activity_commit.h.
 *
 * Unlike ingest (ingest_commit.c) there is no pipeline: a batch of
 * check-ins is one small statement that mostly probes an index, and the
 * route's own read transaction costs more than the wait for it, so one
 * batch at a time keeps the code short for little loss.
 */
#include <pthread.h>
#include <stdbool.h>

#include "common/check.h"
#include "common/log.h"
#include "server/service/activity_commit.h"

/* Bounds the statement's arrays and the rows one transaction locks. */
#define MAX_BATCH 256

typedef struct job {
	int64_t app_id;
	const st_checkin *row;
	int rc;
	bool done;
	pthread_cond_t wake; /* done */
	struct job *next;    /* in the queue */
} job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER; /* queue_head set */
static job *queue_head;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static bool started;

/* Moves the oldest job and the queued jobs of its app (up to MAX_BATCH,
 * oldest first) into BATCH. Called with LOCK held and the queue not
 * empty. */
static size_t take_batch(job **batch)
{
	if (NEVER(!queue_head))
		return 0;
	int64_t app_id = queue_head->app_id;
	size_t n = 0;
	for (job **link = &queue_head; *link && n < MAX_BATCH;) {
		job *j = *link;
		if (j->app_id == app_id) {
			*link = j->next;
			batch[n++] = j;
		} else {
			link = &j->next;
		}
	}
	return n;
}

typedef struct batch {
	int64_t app_id;
	const st_checkin *rows[MAX_BATCH];
	size_t n;
} batch;

static int count_cb(st_conn *c, void *cls)
{
	batch *b = cls;
	return st_activity_count(c, b->app_id, b->rows, b->n);
}

/* Stores JOBS (N) in one statement and answers them. */
static void store(job **jobs, size_t n)
{
	batch b = {.app_id = jobs[0]->app_id, .n = n};
	for (size_t i = 0; i < n; i++)
		b.rows[i] = jobs[i]->row;
	int rc = st_run_autocommit("count_activity", count_cb, &b);
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < n; i++) {
		jobs[i]->rc = rc;
		jobs[i]->done = true;
		pthread_cond_signal(&jobs[i]->wake);
	}
	pthread_mutex_unlock(&lock);
}

static void *writer_main(void *unused)
{
	(void)unused;
	job *jobs[MAX_BATCH];
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!queue_head)
			pthread_cond_wait(&work, &lock);
		size_t n = take_batch(jobs);
		pthread_mutex_unlock(&lock);
		if (n)
			store(jobs, n);
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

/* The writer lives as long as the process: callers wait for it until the
 * last in-flight request is answered, and nothing is left queued then. */
static void start(void)
{
	pthread_t t;
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	started = pthread_create(&t, &attr, writer_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	if (started)
		pthread_setname_np(t, "activity-writer");
	else
		cm_log(CM_ERROR, "sampling: cannot start the activity writer thread");
}

int srv_activity_count(int64_t app_id, const st_checkin *row)
{
	pthread_once(&start_once, start);
	if (!started)
		return ST_HARD_ERROR;
	job self = {.app_id = app_id, .row = row};
	pthread_cond_init(&self.wake, NULL);
	pthread_mutex_lock(&lock);
	job **tail = &queue_head;
	while (*tail)
		tail = &(*tail)->next;
	*tail = &self;
	pthread_cond_signal(&work);
	while (!self.done)
		pthread_cond_wait(&self.wake, &lock);
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&self.wake);
	return self.rc;
}
