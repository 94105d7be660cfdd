/* commit_queue.c — see commit_queue.h. */
#include "common/check.h"
#include "common/log.h"
#include "server/service/commit_queue.h"

void srv_commit_enqueue(srv_commit_queue *q, srv_commit_job *job)
{
	job->done = false;
	job->next = NULL;
	pthread_cond_init(&job->wake, NULL);
	srv_commit_job **tail = &q->head;
	while (*tail)
		tail = &(*tail)->next;
	*tail = job;
	q->queued++;
	pthread_cond_signal(&q->work);
}

void srv_commit_await(srv_commit_queue *q, srv_commit_job *job)
{
	while (!job->done)
		pthread_cond_wait(&job->wake, &q->lock);
	pthread_mutex_unlock(&q->lock);
	pthread_cond_destroy(&job->wake);
}

size_t srv_commit_take(srv_commit_queue *q, srv_commit_job **batch, size_t max,
		       srv_commit_fits fits)
{
	if (NEVER(!q->head))
		return 0;
	int64_t app_id = q->head->app_id;
	size_t n = 0;
	for (srv_commit_job **link = &q->head; *link && n < max;) {
		srv_commit_job *j = *link;
		if (j->app_id == app_id && (!fits || n == 0 || fits(batch, n, j))) {
			*link = j->next;
			batch[n++] = j;
		} else {
			link = &j->next;
		}
	}
	q->queued -= n;
	return n;
}

void srv_commit_finish(srv_commit_queue *q, srv_commit_job *const *batch, size_t n)
{
	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < n; i++) {
		batch[i]->done = true;
		pthread_cond_signal(&batch[i]->wake);
	}
	pthread_mutex_unlock(&q->lock);
}

bool srv_commit_spawn(void *(*main_fn)(void *), const char *name)
{
	pthread_t t;
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return false;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	bool ok = pthread_create(&t, &attr, main_fn, NULL) == 0;
	pthread_attr_destroy(&attr);
	if (ok)
		pthread_setname_np(t, name);
	else
		cm_log(CM_ERROR, "cannot start the %s thread", name);
	return ok;
}
