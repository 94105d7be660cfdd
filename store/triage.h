/*
 * triage.h — the release comparison's numbers (SPEC §10.3), read from the
 * aggregates kept at ingest (group_facet_days, schema/025;
 * activity_daily, schema/019), never from reports. Same conventions as
 * store.h: runs inside a st_run_tx callback; negative = failure.
 *
 * Memory: inputs are borrowed for the call; a row's strings are valid
 * only during the callback.
 */
#ifndef STALLSCOPE_STORE_TRIAGE_H
#define STALLSCOPE_STORE_TRIAGE_H

#include <stdint.h>

#include "store/store.h"

/* One level-1 group with a report of the base or target version. */
typedef struct st_compare_row {
	const char *key;
	int64_t base_reports;	 /* every stored report of the base version */
	int64_t base_affected;	 /* distinct sampled user-days, per day summed */
	int64_t target_affected; /* the same in the target version */
	int64_t target_reports;	 /* every stored report of the target version */
	int64_t base_stall_ms;	 /* summed durations of the base's reports */
	int64_t target_stall_ms; /* the same of the target's */
} st_compare_row;

typedef int (*st_compare_cb)(void *cls, const st_compare_row *row);

/*
 * The level-1 groups of APP_ID with a report of app version BASE or TARGET
 * on the days FROM … TO (NULL: unbounded), to CB in no order; the
 * versions' sampled user-days over those days into *BASE_SAMPLED and
 * *TARGET_SAMPLED. Returns the number of groups.
 */
int st_compare(st_conn *c, int64_t app_id, const char *base, const char *target, const char *from,
	       const char *to, st_compare_cb cb, void *cls, int64_t *base_sampled,
	       int64_t *target_sampled);

/* What a listed row shows of its group: its frames (a JSON array of
 * identities) and culprit (JSON, NULL when none); INDEX its place (from 0)
 * in the keys asked for. */
typedef struct st_compare_face {
	size_t index;
	const char *frames, *culprit;
} st_compare_face;

typedef int (*st_compare_face_cb)(void *cls, const st_compare_face *face);

/*
 * The frames and culprit of the level-1 groups KEYS (a PostgreSQL text[]
 * literal of group keys) of APP_ID, to CB: only the rows a page lists,
 * after st_compare counted them all. Returns the number of groups.
 */
int st_compare_faces(st_conn *c, int64_t app_id, const char *keys, st_compare_face_cb cb,
		     void *cls);

#endif
