/*
 * leases.h — which server does which background work (SPEC §12,
 * docs/STORAGE.md "Leases"): PostgreSQL session advisory locks, one per
 * job and key (an app, or 0 for work of the whole database), held on a
 * connection of the server's own. A lease ends with its connection, so a
 * server that dies, or loses the database, gives its work to the others
 * at once. A lease only spares repeated work: every job stays correct
 * when two servers run it at once (each writes in transactions that lock
 * what they change), so a lease lost without notice costs time, not data.
 *
 * Every server also holds a presence lock on the session, so the servers
 * alive can be counted and the work shared between them.
 *
 * Memory: st_lease_open returns a session the caller owns and frees with
 * st_lease_close. A session is used by one thread at a time.
 */
#ifndef STALLSCOPE_STORE_LEASES_H
#define STALLSCOPE_STORE_LEASES_H

#include <stddef.h>
#include <stdint.h>

typedef enum st_lease_job {
	ST_LEASE_FOLD = 1,	  /* folding one app's deltas (key: the app) */
	ST_LEASE_COORDINATOR = 2, /* the database-wide chores (key 0) */
} st_lease_job;

typedef struct st_lease_session st_lease_session;

/* Connects to CONNINFO and takes the presence lock: the session, or NULL
 * with ERR (ERRLEN bytes) filled. */
st_lease_session *st_lease_open(const char *conninfo, char *err, size_t errlen);

/* Takes JOB's lease of KEY without waiting: 1 taken (or already ours), 0
 * another server holds it, or a negative st_status (the session is lost:
 * every lease with it; close it). */
int st_lease_try(st_lease_session *s, st_lease_job job, int64_t key);

/* Gives JOB's lease of KEY back: 0, or a negative st_status. */
int st_lease_release(st_lease_session *s, st_lease_job job, int64_t key);

/* The servers alive (with a presence lock), this one included, into
 * *OUT: 0, or a negative st_status. */
int st_lease_servers(st_lease_session *s, int64_t *out);

/* The apps with deltas waiting to be folded (at most CAP, into APPS, in
 * id order from the first after AFTER, then from the lowest) and the
 * number of apps there are: how many apps were written, or a negative
 * st_status. */
int st_lease_fold_work(st_lease_session *s, int64_t after, int64_t *apps, size_t cap,
		       int64_t *n_apps);

void st_lease_close(st_lease_session *s);

#endif
