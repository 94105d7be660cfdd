/*
 * ingest_commit.h — group commit of ingested reports.
 *
 * One report per transaction spends most of PostgreSQL's time on the
 * transaction rather than the report (its commit, the round trip, waking
 * two processes). Instead, an HTTP thread hands its report in here and
 * waits: while a transaction is in flight, reports queue, and the next
 * one stores every queued report of the same app and policy version in one
 * call of ingest_reports (schema/010), which takes its locks in the one
 * order every batch uses. Each caller returns only once its
 * report's transaction committed, so a 2xx still means stored. At low load
 * a report finds a writer free and goes alone, without waiting for
 * company; under load the batches grow by themselves.
 *
 * A batch the database refuses as a whole (a bug, a violated constraint) is
 * run again one report per transaction, so one bad report fails alone.
 *
 * Memory: ROW and everything it points to are borrowed until the call
 * returns; nothing is kept.
 */
#ifndef STALLSCOPE_SERVER_INGEST_COMMIT_H
#define STALLSCOPE_SERVER_INGEST_COMMIT_H

#include <stdint.h>

#include "store/reports.h"

/* Stores ROW for APP_ID (st_report_ingest's contract for one report):
 * returns 1 with *OUTCOME and *ID, or a negative st_status. Blocks until
 * committed; safe from any number of threads. */
int srv_ingest_commit(int64_t app_id, const st_new_report *row, st_ingest_outcome *outcome,
		      int64_t *id);

#endif
