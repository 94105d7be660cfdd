/*
 * reprocess.h — re-symbolizing reports whose symbols arrived after them
 * (docs/STORAGE.md §Reprocessing): a background thread in `serve` that
 * claims the arrivals of debug files (debug_file_arrivals, a queue the
 * servers share: each arrival is handled by one of them), woken when an
 * upload commits, by a second thread listening for the database's
 * notifications (uploads to other instances) and every
 * STALLSCOPE_REPROCESS_INTERVAL seconds; the server holding the
 * database-wide chores (server/service/leases.h) also sweeps the reports
 * waiting when it took them, in bounded steps. `stallscope reprocess`
 * sweeps every waiting report once. Each report moves in one
 * transaction, under a row lock other instances skip, so group counters
 * stay exact.
 */
#ifndef STALLSCOPE_SERVER_REPROCESS_H
#define STALLSCOPE_SERVER_REPROCESS_H

#include <stdint.h>

#include "server/service/config.h"

/*
 * Reprocesses every report a debug file now answers, under DATA_DIR: a
 * walk of every waiting report, in bounded steps.
 * *OUT_DONE (may be NULL) counts them. Returns 0, or a negative st_status
 * when the database failed.
 */
int srv_reprocess_all(const char *data_dir, int64_t *out_done);

typedef struct srv_reprocess_counts {
	int64_t reprocessed; /* reports symbolized again */
	int64_t regrouped;   /* of which changed groups */
} srv_reprocess_counts;

/*
 * Symbolizes every stored report again with the debug files there are now
 * (rebuilding symcaches of an older format on the way), moving each whose
 * groups changed, counters exact — after an upgrade that changes names,
 * as the Swift demangler did (docs/SYMBOLIZATION.md). One report per
 * transaction, as the waiting ones move; safe while servers run. Fills
 * *OUT; returns 0 or a negative st_status.
 */
int srv_reprocess_every_report(const char *data_dir, srv_reprocess_counts *out);

/* The background threads: started once by `serve` (CFG must outlive
 * them). Returns 0 or -1. */
int srv_reprocess_start(const srv_config *cfg);
/* Asks it to look now (after an upload committed). Safe when not running. */
void srv_reprocess_wake(void);
/* Stops and joins it. */
void srv_reprocess_stop(void);

#endif
