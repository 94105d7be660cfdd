/* leases.c — see leases.h. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "common/log.h"
#include "server/service/leases.h"
#include "store/store.h"

typedef struct held_lease {
	st_lease_job job;
	int64_t key;
} held_lease;

static struct {
	pthread_mutex_t lock;
	char *conninfo;
	st_lease_session *session;
	held_lease *held;
	size_t n, cap;
} leases = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The counts /metrics shows, kept outside the lock: a scrape must not
 * wait for a lease query stuck on an unreachable database. */
static atomic_size_t held_count[ST_LEASE_COORDINATOR + 1];

/* A failure to open the session is logged at most this often. */
#define LOG_EVERY_S 60
static time_t last_open_failure_log;

static size_t count_held(st_lease_job job)
{
	size_t count = 0;
	for (size_t i = 0; i < leases.n; i++)
		count += leases.held[i].job == job;
	return count;
}

/* Under the lock, after every change of the leases held. */
static void publish_counts(void)
{
	atomic_store(&held_count[ST_LEASE_FOLD], count_held(ST_LEASE_FOLD));
	atomic_store(&held_count[ST_LEASE_COORDINATOR], count_held(ST_LEASE_COORDINATOR));
}

int srv_leases_start(const char *conninfo)
{
	pthread_mutex_lock(&leases.lock);
	free(leases.conninfo);
	leases.conninfo = strdup(conninfo);
	pthread_mutex_unlock(&leases.lock);
	return leases.conninfo ? 0 : -1;
}

/* Under the lock: the session is gone, and every lease with it. */
static void lose_session(void)
{
	if (leases.session)
		cm_log(CM_WARN, "leases: lost the database session; the other servers take "
				"this one's background work until it is back");
	st_lease_close(leases.session);
	leases.session = NULL;
	leases.n = 0;
	publish_counts();
}

/* Under the lock: the session, opened when there is none. */
static st_lease_session *session(void)
{
	if (!leases.session && leases.conninfo) {
		char err[512];
		leases.session = st_lease_open(leases.conninfo, err, sizeof err);
		time_t now = time(NULL);
		if (leases.session)
			cm_log(CM_INFO, "leases: session open");
		else if (now - last_open_failure_log >= LOG_EVERY_S) {
			/* Without it this server does no background work. */
			last_open_failure_log = now;
			cm_log(CM_WARN,
			       "leases: cannot open the session (%s); the other servers "
			       "do the background work",
			       err);
		}
	}
	return leases.session;
}

void srv_leases_stop(void)
{
	pthread_mutex_lock(&leases.lock);
	st_lease_close(leases.session);
	leases.session = NULL;
	free(leases.held);
	leases.held = NULL;
	leases.n = leases.cap = 0;
	publish_counts();
	free(leases.conninfo);
	leases.conninfo = NULL;
	pthread_mutex_unlock(&leases.lock);
}

static long find(st_lease_job job, int64_t key)
{
	for (size_t i = 0; i < leases.n; i++)
		if (leases.held[i].job == job && leases.held[i].key == key)
			return (long)i;
	return -1;
}

static bool remember(st_lease_job job, int64_t key)
{
	if (leases.n == leases.cap) {
		size_t cap = leases.cap ? 2 * leases.cap : 16;
		held_lease *v = realloc(leases.held, cap * sizeof *v);
		if (!v)
			return false;
		leases.held = v;
		leases.cap = cap;
	}
	leases.held[leases.n++] = (held_lease){job, key};
	return true;
}

bool srv_lease_take(st_lease_job job, int64_t key)
{
	pthread_mutex_lock(&leases.lock);
	bool ours = find(job, key) >= 0;
	st_lease_session *s = ours ? NULL : session();
	if (s) {
		int rc = st_lease_try(s, job, key);
		if (rc < 0)
			lose_session();
		/* Not remembered (out of memory): given back, or it would
		 * never be. */
		else if (rc == 1 && !(ours = remember(job, key)))
			st_lease_release(s, job, key);
		publish_counts();
	}
	pthread_mutex_unlock(&leases.lock);
	return ours;
}

static bool is_busy(int64_t key, const int64_t *busy, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (busy[i] == key)
			return true;
	return false;
}

/* Under the lock: gives back one lease of JOB, an idle one when
 * IDLE_ONLY. Whether one was given back. */
static bool give_back_one(st_lease_job job, bool idle_only, const int64_t *busy, size_t n)
{
	for (size_t i = leases.n; i-- > 0;) {
		held_lease h = leases.held[i];
		if (h.job != job || (idle_only && is_busy(h.key, busy, n)))
			continue;
		leases.held[i] = leases.held[--leases.n];
		if (st_lease_release(leases.session, job, h.key) < 0)
			lose_session();
		return true;
	}
	return false;
}

void srv_lease_trim(st_lease_job job, int64_t share, const int64_t *busy, size_t n)
{
	pthread_mutex_lock(&leases.lock);
	while (leases.session && (int64_t)count_held(job) > share)
		if (!give_back_one(job, true, busy, n))
			give_back_one(job, false, busy, n);
	publish_counts();
	pthread_mutex_unlock(&leases.lock);
}

int64_t srv_lease_servers(void)
{
	pthread_mutex_lock(&leases.lock);
	int64_t n = 1;
	st_lease_session *s = session();
	if (s && st_lease_servers(s, &n) < 0)
		lose_session();
	pthread_mutex_unlock(&leases.lock);
	return n > 0 ? n : 1;
}

int srv_lease_fold_work(int64_t after, int64_t *apps, size_t cap, int64_t *n_apps)
{
	pthread_mutex_lock(&leases.lock);
	st_lease_session *s = session();
	int rc = s ? st_lease_fold_work(s, after, apps, cap, n_apps) : ST_SOFT_ERROR;
	if (s && rc < 0)
		lose_session();
	pthread_mutex_unlock(&leases.lock);
	return rc;
}

size_t srv_leases_held(st_lease_job job)
{
	return atomic_load(&held_count[job]);
}
