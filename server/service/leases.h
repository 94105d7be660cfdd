/*
 * leases.h — this server's share of the background work when several
 * share one database (SPEC §12, docs/STORAGE.md "Leases"): the leases of
 * store/leases.h on one session, opened on first use and again after it
 * was lost (every lease with it), shared by the background threads.
 *
 * Memory: the module keeps the session and the list of leases held;
 * srv_leases_stop frees both. Every function is thread-safe.
 */
#ifndef STALLSCOPE_SERVER_LEASES_H
#define STALLSCOPE_SERVER_LEASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/leases.h"

/* Remembers the database to open the session on (copied). 0 or -1. */
int srv_leases_start(const char *conninfo);
/* Closes the session: the other servers take the leases at once. */
void srv_leases_stop(void);

/* Whether this server holds JOB's lease of KEY, taking it when nobody
 * does. False also when the database cannot be reached. */
bool srv_lease_take(st_lease_job job, int64_t key);

/* Gives back JOB's leases beyond SHARE, those whose key is not among the
 * N in BUSY first: when more servers came, each takes its part. */
void srv_lease_trim(st_lease_job job, int64_t share, const int64_t *busy, size_t n);

/* The servers sharing the database (this one included, so at least 1). */
int64_t srv_lease_servers(void);

/* store/leases.h's st_lease_fold_work on the session: how many apps, or
 * a negative st_status. */
int srv_lease_fold_work(int64_t after, int64_t *apps, size_t cap, int64_t *n_apps);

/* How many leases of JOB this server holds (for /metrics: never waits
 * for the database). */
size_t srv_leases_held(st_lease_job job);

#endif
