/*
 * commit_queue.h — what the group commits (ingest_commit.c,
 * activity_commit.c) share: HTTP threads queue a job and wait on it; one
 * writer thread of the module takes the queued jobs of one app as a batch,
 * stores them in one statement and answers them.
 *
 * Memory: a job is the caller's (on its stack, usually the first member of
 * the module's own job struct), linked into the queue from
 * srv_commit_enqueue until the writer answers it; the queue holds nothing
 * else.
 */
#ifndef STALLSCOPE_SERVER_COMMIT_QUEUE_H
#define STALLSCOPE_SERVER_COMMIT_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct srv_commit_job {
	int64_t app_id;
	int rc; /* the writer's answer */
	bool done;
	pthread_cond_t wake; /* done */
	struct srv_commit_job *next;
} srv_commit_job;

typedef struct srv_commit_queue {
	pthread_mutex_t lock;
	pthread_cond_t work; /* head set */
	srv_commit_job *head;
	size_t queued;
} srv_commit_queue;

#define SRV_COMMIT_QUEUE_INIT                                                                      \
	{                                                                                          \
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0                       \
	}

/* Appends JOB (its app_id set) to Q and wakes the writer. Called with
 * Q->lock held. */
void srv_commit_enqueue(srv_commit_queue *q, srv_commit_job *job);

/* Waits until the writer answered JOB, then releases Q->lock. Called with
 * Q->lock held, after srv_commit_enqueue. */
void srv_commit_await(srv_commit_queue *q, srv_commit_job *job);

/* Whether queued job J may join the N jobs of BATCH (all of J's app). */
typedef bool (*srv_commit_fits)(srv_commit_job *const *batch, size_t n, const srv_commit_job *j);

/* Moves the oldest job and the queued jobs of its app that FITS accepts
 * (NULL: all), oldest first, up to MAX, into BATCH; returns how many.
 * Called with Q->lock held and Q not empty. */
size_t srv_commit_take(srv_commit_queue *q, srv_commit_job **batch, size_t max,
		       srv_commit_fits fits);

/* Answers the N jobs of BATCH (rc set) and wakes their callers. Takes
 * Q->lock. */
void srv_commit_finish(srv_commit_queue *q, srv_commit_job *const *batch, size_t n);

/* Starts MAIN_FN as a detached thread named NAME; false (logged) when it
 * cannot. */
bool srv_commit_spawn(void *(*main_fn)(void *), const char *name);

#endif
