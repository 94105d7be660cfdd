/*
 * retention.h — SPEC §5's retention: every app's report partitions older
 * than its retention_days are dropped whole (groups keep their history),
 * with the per-user activity rows of those days (the activity counters
 * stay), and the partitions of today and tomorrow are made ahead of ingest. Run by
 * `stallscope purge`, and daily by the `serve` holding the database-wide
 * chores (server/service/leases.h), at once when it takes them.
 */
#ifndef STALLSCOPE_SERVER_RETENTION_H
#define STALLSCOPE_SERVER_RETENTION_H

#include <stdint.h>
#include <time.h>

#include "ingest/sampling.h"
#include "store/store.h"

/* Into OUT, the oldest UTC day APP_ID keeps at NOW, as its retention_days
 * policy says (read on C): today and the retention_days - 1 days before
 * it. 0, or a negative st_status. */
int srv_retention_oldest_kept(st_conn *c, int64_t app_id, time_t now, char out[ING_DAY_LEN]);

/* One pass at NOW; *OUT_DROPPED (may be NULL) counts partitions dropped.
 * Returns 0, or a negative st_status. */
int srv_retention_run(time_t now, int64_t *out_dropped);

/* The daily thread of `serve`. */
int srv_retention_start(void);
void srv_retention_stop(void);

#endif
