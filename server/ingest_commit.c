/*
 * ingest_commit.c — group commit of ingested reports; see ingest_commit.h.
 *
 * Callers queue their report and wait, each on its own condition variable.
 * Whoever finds the writer slot free becomes the writer: it takes a batch,
 * stores it, marks its jobs done and wakes their callers; if its own report
 * is still queued it writes again, else it wakes the caller of the oldest
 * queued report to take over. No thread of our own: the waiting HTTP
 * threads do the writing, and no caller is woken for nothing.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "server/ingest_commit.h"
#include "server/metrics.h"

/* Transactions in flight at once (per server). With two, a batch finds
 * the other holding its popular groups' rows until the other's commit, and
 * each takes fewer reports: more CPU per report and no more reports per
 * second on two CPUs (docs/PERFORMANCE.md). The lock order of
 * ingest_reports still matters: several servers may share a database. */
#define WRITERS 1
/* Bounds the locks one transaction holds; the HTTP threads, each waiting
 * for one report, bound a batch first. */
#define MAX_BATCH 64

typedef struct job {
	int64_t app_id;
	const st_new_report *row;
	st_ingest_outcome outcome;
	int64_t id;
	int rc;
	bool done;
	pthread_cond_t wake; /* done, or the writer slot is free */
	struct job *next;
} job;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static job *queue_head;
static unsigned writing;

/* True when BATCH's N jobs hold J's report_id already. */
static bool holds_report(job *const *batch, size_t n, const job *j)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(batch[i]->row->report_id, j->row->report_id) == 0)
			return true;
	return false;
}

/* Moves the oldest job and the queued jobs of its app and policy version
 * (up to MAX_BATCH, oldest first) into BATCH. A second report with the
 * same report_id (a resend racing the first) waits for the next batch:
 * ingest_reports decides each report before storing any, so it would
 * count the pair twice. Called with LOCK held and the queue not empty. */
static size_t take_batch(job **batch)
{
	const job *first = queue_head;
	int64_t app_id = first->app_id, version = first->row->config_version;
	size_t n = 0;
	for (job **link = &queue_head; *link && n < MAX_BATCH;) {
		job *j = *link;
		if (j->app_id == app_id && j->row->config_version == version &&
		    !holds_report(batch, n, j)) {
			*link = j->next;
			batch[n++] = j;
		} else {
			link = &j->next;
		}
	}
	return n;
}

typedef struct batch_tx {
	int64_t app_id;
	const st_new_report *rows[MAX_BATCH];
	st_ingest_outcome outcomes[MAX_BATCH];
	int64_t ids[MAX_BATCH];
	size_t n;
} batch_tx;

static int store_cb(st_conn *c, void *cls)
{
	batch_tx *b = cls;
	return st_report_ingest(c, b->app_id, b->rows, b->n, b->outcomes, b->ids);
}

/* Stores BATCH's N jobs and fills in their results (not DONE). */
static void store(job **batch, size_t n)
{
	batch_tx b = {.app_id = batch[0]->app_id, .n = n};
	for (size_t i = 0; i < n; i++)
		b.rows[i] = batch[i]->row;
	int rc = st_run_autocommit("ingest_reports", store_cb, &b);
	if (rc >= 0)
		srv_metrics_ingest_commit(n);
	if (rc == ST_HARD_ERROR && n > 1) {
		for (size_t i = 0; i < n; i++)
			store(&batch[i], 1);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		batch[i]->rc = rc < 0 ? rc : 1;
		batch[i]->outcome = b.outcomes[i];
		batch[i]->id = b.ids[i];
	}
}

int srv_ingest_commit(int64_t app_id, const st_new_report *row, st_ingest_outcome *outcome,
		      int64_t *id)
{
	job self = {.app_id = app_id, .row = row};
	pthread_cond_init(&self.wake, NULL);
	pthread_mutex_lock(&lock);
	job **tail = &queue_head;
	while (*tail)
		tail = &(*tail)->next;
	*tail = &self;
	srv_metrics_ingest_queue(1);
	while (!self.done) {
		if (writing == WRITERS || !queue_head) {
			pthread_cond_wait(&self.wake, &lock);
			continue;
		}
		job *batch[MAX_BATCH];
		size_t n = take_batch(batch);
		srv_metrics_ingest_queue(-(long)n);
		writing++;
		pthread_mutex_unlock(&lock);
		store(batch, n);
		pthread_mutex_lock(&lock);
		writing--;
		for (size_t i = 0; i < n; i++) {
			batch[i]->done = true;
			pthread_cond_signal(&batch[i]->wake);
		}
		if (self.done && queue_head)
			pthread_cond_signal(&queue_head->wake);
	}
	pthread_mutex_unlock(&lock);
	pthread_cond_destroy(&self.wake);
	*outcome = self.outcome;
	*id = self.id;
	return self.rc;
}
