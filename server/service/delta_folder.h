/*
 * delta_folder.h — counting ingest's deltas into the groups' counters and
 * the day, dimension and facet rows (schema/026, 028, docs/STORAGE.md
 * "Deltas"): a thread of `serve` folds the waiting deltas of the apps
 * whose lease it holds each second (server/service/leases.h: with several
 * servers on one database each folds its share of the apps, and the
 * holder of the database-wide chores reopens ignores that ran out), and
 * each reader of those rows folds its app's first, so every answer counts
 * every report committed before it.
 *
 * Memory: nothing is kept between calls.
 */
#ifndef STALLSCOPE_SERVER_DELTA_FOLDER_H
#define STALLSCOPE_SERVER_DELTA_FOLDER_H

#include <stdint.h>

#include "server/service/config.h"
#include "store/store.h"

/* A reader of what the fold counts: folds APP_ID's deltas, then runs CB
 * as st_run_tx(NAME, CB, CLS) and returns what that returns (or the
 * fold's negative st_status, CB not run). */
int srv_deltas_fold_then_read(int64_t app_id, const char *name, st_tx_cb cb, void *cls);

/* The thread of `serve`: a fold of the apps whose lease this server
 * holds every CFG->fold_interval seconds. CFG must outlive the thread;
 * srv_leases_start comes first. */
int srv_delta_folder_start(const srv_config *cfg);
void srv_delta_folder_stop(void);

#endif
