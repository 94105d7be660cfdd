/*
 * lifecycle.h — a level-1 group's status and its events (SPEC §11.1;
 * schema/043, docs/STORAGE.md "Lifecycle"). Ingest and the fold decide
 * most transitions in SQL (ingest_reports, lifecycle_after_fold); these
 * are the user's, the background loop's and reprocessing's. Same
 * conventions as store.h: runs inside a st_run_tx callback; negative =
 * st_status.
 *
 * Memory: inputs are borrowed for the call; JSON comes back as one
 * malloc'ed string (*OUT_JSON, caller frees).
 */
#ifndef STALLSCOPE_STORE_LIFECYCLE_H
#define STALLSCOPE_STORE_LIFECYCLE_H

#include <stdint.h>

#include "store/store.h"

/* A user's change of status: STATUS is open, resolved or ignored;
 * RESOLVED_IN (resolved), UNTIL (an RFC 3339 time) and UNTIL_REPORTS
 * (decimal text) are NULL when not given. */
typedef struct st_status_change {
	const char *status, *resolved_in, *until, *until_reports;
} st_status_change;

/* Sets KEY1's status with its event (cause user). 1, or 0 when APP_ID has
 * no such level-1 group. */
int st_group_status_set(st_conn *c, int64_t app_id, const char *key1,
			const st_status_change *change);

/* {"key","status","resolved_in"?,"until"?,"until_reports"?,"changed_at"?}
 * of KEY1 (open, without changed_at, when never set). 1, or 0 when APP_ID
 * has no such level-1 group. */
int st_group_status_json(st_conn *c, int64_t app_id, const char *key1, char **out_json);

/* {"events":[{"id","event_id","at","type","status","cause","version","day"?,
 * "reports"?}]} of KEY1, newest first, at most 200. 1, or 0 when APP_ID
 * has no such level-1 group. */
int st_group_events_json(st_conn *c, int64_t app_id, const char *key1, char **out_json);

/* Opens again every group of every app ignored until a time now past;
 * returns how many. */
int st_lifecycle_reopen_expired(st_conn *c);

/* Reprocessing moved REPORT from FROM_KEY1 to TO_KEY1 (its level-1
 * frames FRAMES1 and waits WAITS, JSON as ingest stores them, of app
 * version VERSION, NULL when unknown): the rules of its arrival there
 * (lifecycle_report_moved). After st_group_move and before the report's
 * stacks are kept, in its transaction: status rows come before stacks in
 * every writer's lock order. */
int st_lifecycle_report_moved(st_conn *c, int64_t app_id, int64_t report, const char *from_key1,
			      const char *to_key1, const char *frames1, const char *waits,
			      const char *version);

#endif
