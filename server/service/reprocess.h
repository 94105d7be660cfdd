/*
 * reprocess.h — re-symbolizing reports whose symbols arrived after them
 * (docs/STORAGE.md §Reprocessing): a background thread in `serve`, woken
 * when an upload commits and looking every STALLSCOPE_REPROCESS_INTERVAL
 * seconds (uploads to other instances), and the same work on demand for
 * `stallscope reprocess`. Each report moves in one transaction, under a
 * row lock other instances skip, so group counters stay exact.
 */
#ifndef STALLSCOPE_SERVER_REPROCESS_H
#define STALLSCOPE_SERVER_REPROCESS_H

#include <stdint.h>

#include "server/service/config.h"

/*
 * Reprocesses every report a debug file now answers, under DATA_DIR.
 * *OUT_DONE (may be NULL) counts them. Returns 0, or a negative st_status
 * when the database failed.
 */
int srv_reprocess_all(const char *data_dir, int64_t *out_done);

/* The background thread: started once by `serve` (CFG must outlive it). */
int srv_reprocess_start(const srv_config *cfg);
/* Asks it to look now (after an upload committed). Safe when not running. */
void srv_reprocess_wake(void);
/* Stops and joins it. */
void srv_reprocess_stop(void);

#endif
