/*
 * group_stacks.h — the representative stacks of a group's retained
 * reports, each distinct stack once with how many reports have it: what
 * the call tree (server/service/call_tree.h, SPEC §10.4) is built from.
 *
 * Memory: a stack's texts are lent to the callback for the call only.
 */
#ifndef STALLSCOPE_STORE_GROUP_STACKS_H
#define STALLSCOPE_STORE_GROUP_STACKS_H

#include <stdint.h>

#include "store/groups.h"

/* REPORTS reports have the stack BODY: a thread object {"name","main",
 * "frames"} or a bare frames array, its frames as ing_symbolized writes
 * them (ingest/symbolicate.h); NULL when the stack is lost. A negative
 * return stops the walk and fails it. MS: an Android stack's durations
 * summed over those reports per frame, innermost first, as a JSON array
 * (null for a frame without); NULL when its reports stored none
 * (schema/051: an iOS stack, or one stored before, whose frames carry
 * their own "ms"). */
typedef int (*st_stack_cb)(void *cls, int64_t reports, const char *body, const char *ms);

/*
 * Hands CB every distinct representative stack of the retained reports of
 * level-1 group KEY1 of APP_ID (only level-2 group KEY2's when KEY2 is not
 * NULL) that match F, as the group's reports page filters them, most
 * reports first. Filtered by days and version only (or not at all), the
 * counts are read from group_stack_days (schema/024); with an OS version,
 * device or kind, the matching report rows are read once (their
 * skeletons, not their stacks) and aggregated in PostgreSQL. Either way
 * the distinct stacks come through a cursor, ST_STACK_BATCH at a time, so
 * the caller's memory does not grow with the number of reports or stacks.
 * Runs in the caller's transaction. 1, 0 when the app never had a report in the group,
 * or a negative st_status (or CB's).
 */
#define ST_STACK_BATCH 256
int st_group_stacks(st_conn *c, int64_t app_id, const char *key1, const char *key2,
		    const st_group_filter *f, st_stack_cb cb, void *cls);

#endif
