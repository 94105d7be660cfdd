/*
 * activity_commit.c — group commit of sampling check-ins; see
 * activity_commit.h.
 *
 * Unlike ingest (ingest_commit.c) there is no pipeline: a batch of calls
 * is one small statement of index probes that does not wait for the disk
 * (store/activity.c), so one batch at a time keeps the code short.
 */
#include <stddef.h>

#include "server/service/activity_commit.h"
#include "server/service/commit_queue.h"

/* Bounds the statement's arrays and the rows one transaction locks. */
#define MAX_BATCH 256

typedef struct job {
	srv_commit_job base; /* first: the queue's jobs are ours */
	int64_t config_version;
	st_checkin *row;
} job;

static srv_commit_queue queue = SRV_COMMIT_QUEUE_INIT;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static bool started;

typedef struct batch {
	int64_t app_id, config_version;
	st_checkin *rows[MAX_BATCH];
	size_t n;
} batch;

static int check_in_cb(st_conn *c, void *cls)
{
	batch *b = cls;
	return st_sampling_check_ins(c, b->app_id, b->config_version, b->rows, b->n);
}

/* A batch is of one policy version. */
static bool fits(srv_commit_job *const *batch_jobs, size_t n, const srv_commit_job *j)
{
	(void)n;
	return ((const job *)j)->config_version == ((const job *)batch_jobs[0])->config_version;
}

/* Stores JOBS (N) in one statement and answers them. */
static void store(srv_commit_job **jobs, size_t n)
{
	batch b = {.app_id = jobs[0]->app_id,
		   .config_version = ((job *)jobs[0])->config_version,
		   .n = n};
	for (size_t i = 0; i < n; i++)
		b.rows[i] = ((job *)jobs[i])->row;
	int rc = st_run_autocommit("sampling_check_ins", check_in_cb, &b);
	for (size_t i = 0; i < n; i++)
		jobs[i]->rc = rc;
	srv_commit_finish(&queue, jobs, n);
}

static void *writer_main(void *unused)
{
	(void)unused;
	srv_commit_job *jobs[MAX_BATCH];
	pthread_mutex_lock(&queue.lock);
	for (;;) {
		while (!queue.head)
			pthread_cond_wait(&queue.work, &queue.lock);
		size_t n = srv_commit_take(&queue, jobs, MAX_BATCH, fits);
		pthread_mutex_unlock(&queue.lock);
		store(jobs, n);
		pthread_mutex_lock(&queue.lock);
	}
	return NULL;
}

/* The writer lives as long as the process: callers wait for it until the
 * last in-flight request is answered, and nothing is left queued then. */
static void start(void)
{
	started = srv_commit_spawn(writer_main, "activity-writer");
}

int srv_activity_check_in(int64_t app_id, int64_t config_version, st_checkin *row)
{
	pthread_once(&start_once, start);
	if (!started)
		return ST_HARD_ERROR;
	job self = {.base.app_id = app_id, .config_version = config_version, .row = row};
	pthread_mutex_lock(&queue.lock);
	srv_commit_enqueue(&queue, &self.base);
	srv_commit_await(&queue, &self.base);
	return self.base.rc;
}
