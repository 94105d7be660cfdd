/* background.c — see background.h. */
#include <time.h>

#include "server/service/background.h"

static void *loop(void *arg)
{
	srv_background *bg = arg;
	pthread_mutex_lock(&bg->lock);
	while (!bg->stop) {
		bg->wake = false;
		pthread_mutex_unlock(&bg->lock);
		int seconds = bg->pass(bg->cls);
		pthread_mutex_lock(&bg->lock);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += seconds;
		/* A wake during the pass counts: the next pass starts at once. */
		while (!bg->stop && !bg->wake &&
		       pthread_cond_timedwait(&bg->cond, &bg->lock, &until) == 0)
			;
	}
	pthread_mutex_unlock(&bg->lock);
	return NULL;
}

int srv_background_start(srv_background *bg, srv_background_pass pass, void *cls)
{
	bg->pass = pass;
	bg->cls = cls;
	bg->stop = false;
	if (pthread_create(&bg->thread, NULL, loop, bg) != 0)
		return -1;
	bg->running = true;
	return 0;
}

void srv_background_wake(srv_background *bg)
{
	pthread_mutex_lock(&bg->lock);
	bg->wake = true;
	pthread_cond_signal(&bg->cond);
	pthread_mutex_unlock(&bg->lock);
}

bool srv_background_stopping(srv_background *bg)
{
	pthread_mutex_lock(&bg->lock);
	bool stop = bg->stop;
	pthread_mutex_unlock(&bg->lock);
	return stop;
}

void srv_background_stop(srv_background *bg)
{
	if (!bg->running)
		return;
	pthread_mutex_lock(&bg->lock);
	bg->stop = true;
	pthread_cond_signal(&bg->cond);
	pthread_mutex_unlock(&bg->lock);
	pthread_join(bg->thread, NULL);
	bg->running = false;
}
