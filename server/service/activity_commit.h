/*
 * activity_commit.h — group commit of sampling check-ins (SPEC §10.2).
 *
 * Every device asks GET /api/v1/sampling once a day, the hottest route:
 * what its answer needs from the database (the whitelist, the quota used)
 * and counting its user as active must not cost a transaction per
 * request. An HTTP thread hands its call in here and waits; one writer
 * thread answers and counts every queued call of one app and policy
 * version in one statement (sampling_check_ins, its own transaction).
 * While that statement runs the next calls queue, so under load one
 * commit serves many requests; alone, a call goes at once. Each caller
 * returns only once its call committed, so a 2xx means counted.
 *
 * Memory: ROW and its strings are borrowed until the call returns.
 */
#ifndef STALLSCOPE_SERVER_ACTIVITY_COMMIT_H
#define STALLSCOPE_SERVER_ACTIVITY_COMMIT_H

#include <stdint.h>

#include "store/activity.h"

/* Answers and counts ROW for APP_ID under its policy of version
 * CONFIG_VERSION (st_sampling_check_ins' contract for one call): 1 with
 * ROW's outputs filled, 0 when that policy version is stale, or a negative
 * st_status. Blocks until committed; safe from any number of threads. */
int srv_activity_check_in(int64_t app_id, int64_t config_version, st_checkin *row);

#endif
