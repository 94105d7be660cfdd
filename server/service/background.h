/*
 * background.h — a background thread running one pass of work, then
 * sleeping the interval the pass returns until the next, woken early on
 * demand and stopped at shutdown (reprocessing, retention).
 *
 * Memory: the caller owns the srv_background (static storage, initialised
 * with SRV_BACKGROUND_INIT) and CLS, which must outlive the thread.
 */
#ifndef STALLSCOPE_SERVER_BACKGROUND_H
#define STALLSCOPE_SERVER_BACKGROUND_H

#include <pthread.h>
#include <stdbool.h>

/* One pass over CLS; returns the seconds to sleep before the next. */
typedef int (*srv_background_pass)(void *cls);

typedef struct srv_background {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool running, stop, wake;
	srv_background_pass pass;
	void *cls;
} srv_background;

#define SRV_BACKGROUND_INIT                                                                        \
	{                                                                                          \
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER                \
	}

/* Starts the thread; its first pass runs at once. Returns 0 or -1. */
int srv_background_start(srv_background *bg, srv_background_pass pass, void *cls);

/* Ends the current sleep (or the next, when a pass is running). */
void srv_background_wake(srv_background *bg);

/* Whether a stop was asked: a long pass checks it between its steps. */
bool srv_background_stopping(srv_background *bg);

/* Lets a running pass finish, then joins the thread; no-op if not started. */
void srv_background_stop(srv_background *bg);

#endif
