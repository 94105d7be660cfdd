/*
 * activity.h — active, sampled and stalled users per app, UTC day and app
 * version (SPEC §10.2; schema/019_active_users.sql, count_activity in
 * schema/functions/). Same conventions as store.h: functions run inside a
 * st_run_tx or st_run_autocommit callback on its connection; negative =
 * failure (ST_SOFT_ERROR / ST_HARD_ERROR). Days are "YYYY-MM-DD" (UTC).
 *
 * Memory: input strings are borrowed for the call; *out_json (malloc)
 * belongs to the caller.
 */
#ifndef STALLSCOPE_STORE_ACTIVITY_H
#define STALLSCOPE_STORE_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* A sampling check-in: USER_ID asked on DAY with APP_VERSION; SAMPLED is
 * ing_sampled's answer for the day, LISTED whether the whitelist holds the
 * user now. */
typedef struct st_checkin {
	const char *day, *app_version, *user_id;
	bool sampled, listed;
} st_checkin;

/* Counts the N check-ins of APP_ID (one statement, its own transaction
 * under st_run_autocommit): each user once per day and version. 0. */
int st_activity_count(st_conn *c, int64_t app_id, const st_checkin *const *rows, size_t n);

/* {"days":[{"day","version","active_users","sampled_users","stalled_users",
 * "reports","stall_ms"}]} of APP_ID over FROM … TO (NULL: unbounded) and
 * VERSION (NULL: all), by day then version, into *OUT_JSON. 1. */
int st_activity_stats(st_conn *c, int64_t app_id, const char *from, const char *to,
		      const char *version, char **out_json);

/* Retention: deletes APP_ID's per-user rows of days before BEFORE_DAY (the
 * counters stay). Rows deleted. */
int st_activity_purge(st_conn *c, int64_t app_id, const char *before_day);

#endif
