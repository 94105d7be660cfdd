/*
 * group_breakdown.h — how a group's reports split by app version, OS
 * version, device and kind (SPEC §10.6), read from the aggregates kept at
 * ingest (group_facet_days, group_dim_days with dim_combos: docs/STORAGE.md
 * "Reading"), never from the report rows. Runs inside a st_run_tx callback
 * (the caller folds the app's deltas first).
 *
 * Memory: inputs are borrowed for the call; *OUT_JSON is malloc'ed and
 * belongs to the caller, who frees it.
 */
#ifndef STALLSCOPE_STORE_GROUP_BREAKDOWN_H
#define STALLSCOPE_STORE_GROUP_BREAKDOWN_H

#include <stdint.h>

#include "store/groups.h"

/* The rows of each dimension a breakdown lists before the rest. */
#define ST_BREAKDOWN_TOP 10

/*
 * The breakdown of level-1 group KEY1 of APP_ID (of its level-2 group KEY2
 * when KEY2 is not NULL) over its reports matching F:
 * {"reports":N,"users":U,"by":{"app_version":[…],"os_version":[…],
 * "device":[…],"kind":[…]}}, each row {"value","reports","users","share"}
 * (share = reports / N), at most ST_BREAKDOWN_TOP rows by reports (ties by
 * value, byte order), then one row with value null summing the rest when
 * there are more. A report without an app version, OS version or device
 * is counted under the value "". Users are distinct users (a HyperLogLog
 * union, exact up to 1,024), whitelisted ones included. No matching report:
 * zero counts and empty lists.
 * 1 with *OUT_JSON; 0 (*OUT_JSON NULL) when the app never had a report in
 * KEY1, or KEY2 is not one of KEY1's level-2 groups with a report; or a
 * negative st_status.
 */
int st_group_breakdown(st_conn *c, int64_t app_id, const char *key1, const char *key2,
		       const st_group_filter *f, char **out_json);

#endif
