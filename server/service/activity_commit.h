/*
 * activity_commit.h — group commit of sampling check-ins (SPEC §10.2).
 *
 * Every device asks GET /api/v1/sampling once a day, so counting its user
 * as active must not cost a transaction per request. An HTTP thread hands
 * its check-in in here and waits; one writer thread stores every queued
 * check-in of one app in one statement (count_activity, its own
 * transaction). While that statement runs the next check-ins queue, so
 * under load one commit serves many requests; alone, a check-in goes at
 * once. Each caller returns only once its check-in committed, so a 2xx
 * means counted.
 *
 * Memory: ROW and its strings are borrowed until the call returns.
 */
#ifndef STALLSCOPE_SERVER_ACTIVITY_COMMIT_H
#define STALLSCOPE_SERVER_ACTIVITY_COMMIT_H

#include <stdint.h>

#include "store/activity.h"

/* Counts ROW for APP_ID. 0, or a negative st_status. Blocks until
 * committed; safe from any number of threads. */
int srv_activity_count(int64_t app_id, const st_checkin *row);

#endif
