/*
 * ingest_commit.c — group commit of ingested reports; see ingest_commit.h.
 *
 * Callers queue their report and wait, each on its own condition variable.
 * A writer thread of our own, started by the first report, takes the
 * queued reports of one app as a batch and sends it down a pipeline
 * (store.h: st_pipe) to ingest_reports, keeping the next batch on its way
 * while the database stores one: one transaction at a time is what bounds
 * the rate (docs/journal/performance.md), so the database must not wait for us
 * between two — neither for the round trip nor for an HTTP thread to be
 * woken and scheduled to take the writer's turn, on CPUs busy parsing and
 * symbolizing. Each caller returns only once its report's transaction
 * committed, so a 2xx still means stored. At low load a report finds the
 * writer idle and goes alone; under load the batches grow by themselves.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "server/service/commit_queue.h"
#include "server/service/ingest_commit.h"
#include "server/service/metrics.h"

/* Batches sent ahead on the writer's connection: one being stored, one
 * waiting behind it. One connection, so they run one after the other:
 * with two transactions at once, a batch finds the other holding its
 * popular groups' rows until the other's commit, and each takes fewer
 * reports: more CPU per report and fewer reports per second on two CPUs
 * (docs/journal/performance.md). The lock order of ingest_reports still matters:
 * several servers may share a database. */
#define DEPTH 2
/* Bounds the locks one transaction holds; the connections, each waiting
 * for one report, bound a batch first. */
#define MAX_BATCH 64

typedef struct job {
	srv_commit_job base; /* first: the queue's jobs are ours */
	const st_new_report *row;
	st_ingest_outcome outcome;
	int64_t id;
} job;

static srv_commit_queue queue = SRV_COMMIT_QUEUE_INIT;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static bool started;
/* While the writer waits for the database with room for another batch in
 * flight, it listens on WAKE_PIPE too, and a caller whose report brings the
 * queue to WAKE_AT reports writes a byte there (0: nobody listens). Without
 * it the writer, blocked on the oldest answer, would send the next batch
 * only after that answer, and the database would wait for it meanwhile. */
static int wake_pipe[2] = {-1, -1};
static size_t wake_at;

static const st_new_report *row_of(const srv_commit_job *j)
{
	return ((const job *)j)->row;
}

/* A batch is of one policy version. A second report with the same
 * report_id (a resend racing the first) waits for the next batch:
 * ingest_reports decides each report before storing any, so it would
 * count the pair twice. */
static bool fits(srv_commit_job *const *batch, size_t n, const srv_commit_job *j)
{
	if (row_of(j)->config_version != row_of(batch[0])->config_version)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(row_of(batch[i])->report_id, row_of(j)->report_id) == 0)
			return false;
	return true;
}

/* Moves the oldest job and the queued jobs of its app that fit it (up to
 * MAX_BATCH, oldest first) into BATCH. Called with the queue's lock held
 * and the queue not empty. */
static size_t take_batch(srv_commit_job **batch)
{
	return srv_commit_take(&queue, batch, MAX_BATCH, fits);
}

/* A batch and its answers. */
typedef struct batch_tx {
	int64_t app_id;
	srv_commit_job *jobs[MAX_BATCH];
	const st_new_report *rows[MAX_BATCH];
	st_ingest_outcome outcomes[MAX_BATCH];
	int64_t ids[MAX_BATCH];
	size_t n;
} batch_tx;

/* Fills B from the N jobs taken into B->jobs. */
static void batch_fill(batch_tx *b, size_t n)
{
	b->n = n;
	b->app_id = b->jobs[0]->app_id;
	for (size_t i = 0; i < n; i++)
		b->rows[i] = row_of(b->jobs[i]);
}

/* Answers JOBS (N, results filled in). */
static void finish(srv_commit_job **jobs, size_t n)
{
	srv_metrics_ingest_queue(-(long)n);
	srv_commit_finish(&queue, jobs, n);
}

/* Sets the results of B's jobs from its answers, or to RC when negative. */
static void batch_answer(batch_tx *b, int rc)
{
	for (size_t i = 0; i < b->n; i++) {
		job *j = (job *)b->jobs[i];
		j->base.rc = rc < 0 ? rc : 1;
		j->outcome = b->outcomes[i];
		j->id = b->ids[i];
	}
}

static int store_cb(st_conn *c, void *cls)
{
	batch_tx *b = cls;
	return st_report_ingest(c, b->app_id, b->rows, b->n, b->outcomes, b->ids);
}

/* Stores JOBS (N) without the pipeline — retried when the database asks,
 * one report at a time when it refuses the batch (so one bad report fails
 * alone), and idempotent if they had been stored already — and answers
 * them. */
static void store(srv_commit_job **jobs, size_t n)
{
	batch_tx b;
	memcpy(b.jobs, jobs, n * sizeof *jobs);
	batch_fill(&b, n);
	srv_metrics_ingest_in_flight(1);
	int rc = st_run_autocommit("ingest_reports", store_cb, &b);
	srv_metrics_ingest_in_flight(-1);
	if (rc == ST_HARD_ERROR && n > 1) {
		for (size_t i = 0; i < n; i++)
			store(&jobs[i], 1);
		return;
	}
	if (rc >= 0)
		srv_metrics_ingest_commit(n);
	batch_answer(&b, rc);
	finish(b.jobs, n);
}

/* Empties WAKE_PIPE (non-blocking) of the bytes written to wake us. */
static void drain_wake_pipe(void)
{
	char bytes[64];
	while (read(wake_pipe[0], bytes, sizeof bytes) > 0)
		;
}

/*
 * While there is work: sends the next batch while fewer than DEPTH are in
 * flight, but the second only once as many reports wait as the first
 * holds — a smaller one would cost the database a transaction for few
 * reports — then waits for the oldest answer, listening for that many
 * reports meanwhile, and reads it. A batch whose answer is lost or
 * refused goes the ordinary way (store).
 */
static int pipeline_cb(st_pipe *p, void *unused)
{
	(void)unused;
	static batch_tx flights[DEPTH]; /* the writer's alone */
	size_t oldest = 0, inflight = 0;
	pthread_mutex_lock(&queue.lock);
	for (;;) {
		if (queue.head && !st_pipe_lost(p) &&
		    (inflight == 0 || (inflight < DEPTH && queue.queued >= flights[oldest].n))) {
			batch_tx *b = &flights[(oldest + inflight) % DEPTH];
			size_t n = take_batch(b->jobs);
			pthread_mutex_unlock(&queue.lock);
			batch_fill(b, n);
			if (st_report_ingest_send(p, b->app_id, b->rows, b->n) == 0) {
				inflight++;
				srv_metrics_ingest_in_flight(1);
			} else
				store(b->jobs, b->n);
			pthread_mutex_lock(&queue.lock);
			continue;
		}
		if (inflight == 0)
			break;
		bool listen = inflight < DEPTH && wake_pipe[0] >= 0;
		if (listen)
			wake_at = flights[oldest].n;
		pthread_mutex_unlock(&queue.lock);
		int ready = st_pipe_wait(p, listen ? wake_pipe[0] : -1);
		if (listen) {
			pthread_mutex_lock(&queue.lock);
			wake_at = 0;
			pthread_mutex_unlock(&queue.lock);
			drain_wake_pipe();
		}
		if (ready == 0) {
			pthread_mutex_lock(&queue.lock);
			continue;
		}
		batch_tx *b = &flights[oldest];
		oldest = (oldest + 1) % DEPTH;
		inflight--;
		srv_metrics_ingest_in_flight(-1);
		if (st_report_ingest_recv(p, b->n, b->outcomes, b->ids) < 0) {
			store(b->jobs, b->n);
		} else {
			srv_metrics_ingest_commit(b->n);
			batch_answer(b, 1);
			finish(b->jobs, b->n);
		}
		pthread_mutex_lock(&queue.lock);
	}
	pthread_mutex_unlock(&queue.lock);
	return st_pipe_lost(p) ? ST_SOFT_ERROR : 0;
}

static void *writer_main(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&queue.lock);
	for (;;) {
		while (!queue.head)
			pthread_cond_wait(&queue.work, &queue.lock);
		pthread_mutex_unlock(&queue.lock);
		/* Returns when the queue ran dry, giving the connection back. */
		if (st_report_ingest_pipeline(pipeline_cb, NULL) < 0) {
			/* No pipeline (no connection, or it broke): a batch the
			 * ordinary way, which waits for the database or fails
			 * fast with the reason. */
			srv_commit_job *jobs[MAX_BATCH];
			pthread_mutex_lock(&queue.lock);
			size_t n = queue.head ? take_batch(jobs) : 0;
			pthread_mutex_unlock(&queue.lock);
			if (n)
				store(jobs, n);
		}
		pthread_mutex_lock(&queue.lock);
	}
	return NULL;
}

/* The writer lives as long as the process: callers wait for it until the
 * last in-flight request is answered, and nothing is left queued then. */
static void start(void)
{
	/* Without the pipe the writer still works, blind to the queue while it
	 * waits for an answer. */
	bool piped = pipe(wake_pipe) == 0;
	if (piped && (fcntl(wake_pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
		      fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK) != 0)) {
		close(wake_pipe[0]);
		close(wake_pipe[1]);
		piped = false;
	}
	if (!piped) {
		cm_log(CM_WARN, "ingest: no wake-up pipe for the writer; it will not "
				"see reports queue while it waits for the database");
		wake_pipe[0] = wake_pipe[1] = -1;
	}
	started = srv_commit_spawn(writer_main, "ingest-writer");
}

int srv_ingest_commit(int64_t app_id, const st_new_report *row, st_ingest_outcome *outcome,
		      int64_t *id)
{
	pthread_once(&start_once, start);
	if (!started)
		return ST_HARD_ERROR;
	job self = {.base.app_id = app_id, .row = row};
	pthread_mutex_lock(&queue.lock);
	srv_commit_enqueue(&queue, &self.base);
	srv_metrics_ingest_queue(1);
	if (wake_at && queue.queued >= wake_at) {
		wake_at = 0;
		/* Full only if the writer has a wake-up unread already. */
		(void)!write(wake_pipe[1], "", 1);
	}
	srv_commit_await(&queue, &self.base);
	*outcome = self.outcome;
	*id = self.id;
	return self.base.rc;
}
