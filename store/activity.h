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

/* A sampling call: USER_ID asked at AT (RFC 3339) on DAY with APP_VERSION
 * (NULL: not counted); SAMPLED is ing_sampled's answer for the day. The
 * store fills LISTED (the whitelist holds the user at AT) and USED (the
 * reports the quota counted for the user that day). */
typedef struct st_checkin {
	const char *day, *at, *app_version, *user_id;
	const char *os_version, *device; /* NULL when the call did not say */
	bool sampled;
	bool listed;  /* out */
	int64_t used; /* out */
} st_checkin;

/* Answers the N calls ROWS of APP_ID made under its policy of version
 * CONFIG_VERSION and counts those with an app version, each user once per
 * day and version, in one statement (its own transaction under
 * st_run_autocommit, committed without waiting for the disk: see
 * activity.c). 1 with every row's outputs filled; 0 when CONFIG_VERSION is
 * not the current policy's (nothing written); or a negative st_status. */
int st_sampling_check_ins(st_conn *c, int64_t app_id, int64_t config_version,
			  st_checkin *const *rows, size_t n);

/* {"days":[{"day","version","active_users","sampled_users","stalled_users",
 * "reports","stall_ms","hang_free_users","adoption"}]} of APP_ID over FROM … TO (NULL: unbounded)
 * and VERSION (NULL: all), by day then version, into *OUT_JSON. 1. */
int st_activity_stats(st_conn *c, int64_t app_id, const char *from, const char *to,
		      const char *version, char **out_json);

/* Retention: deletes APP_ID's per-user rows of days before BEFORE_DAY (the
 * counters stay). Rows deleted. */
int st_activity_purge(st_conn *c, int64_t app_id, const char *before_day);

#endif
