/*
 * policy_cache.h — every app's upload policy (store/reports.h
 * st_app_config) kept in memory, so an ingest request spends no statement
 * of its own reading it.
 *
 * A cached policy is never trusted alone: the report is stored under the
 * version it was made with, and ingest_reports (schema/010) answers stale
 * when the row has changed since; the caller then takes the policy from
 * srv_policy_refresh and makes the report again. So a change committed by
 * any server applies to the very next report.
 *
 * Memory: the cache owns its copies; what srv_policy_get and
 * srv_policy_refresh write to *OUT belongs to the caller
 * (st_app_config_clear).
 */
#ifndef STALLSCOPE_SERVER_POLICY_CACHE_H
#define STALLSCOPE_SERVER_POLICY_CACHE_H

#include <stdint.h>

#include "store/reports.h"

/* The policy of APP_ID, from memory or else from the database. 0 or a
 * negative st_status. */
int srv_policy_get(int64_t app_id, st_app_config *out);

/* The policy of APP_ID read from the database, replacing the cached one. */
int srv_policy_refresh(int64_t app_id, st_app_config *out);

/* Drops what the cache holds (at shutdown). */
void srv_policy_cache_free(void);

#endif
