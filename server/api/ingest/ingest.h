/*
 * ingest.h — what the four ingest endpoints and the backfill share: decode
 * the body, parse it in the endpoint's format, symbolize every report
 * (server/service/stored_form.h), apply the upload policy and store each
 * report in one statement that is its own transaction (docs/STORAGE.md),
 * then answer 202 with what was accepted and what was refused — or, for a
 * request holding a single report that is refused, that refusal's own
 * status (SPEC §7).
 */
#ifndef STALLSCOPE_SERVER_API_INGEST_H
#define STALLSCOPE_SERVER_API_INGEST_H

#include <microhttpd.h>
#include <time.h>

#include "ingest/parse.h"
#include "server/http/http.h"
#include "store/reports.h"

enum MHD_Result srv_ingest_handle(struct MHD_Connection *conn, srv_request *req, ing_format format);

/*
 * The same with RECEIVED as the time the reports arrived (the admin-only
 * backfill, server/api/ingest/h_backfill_post.c): their day for sampling,
 * quota, partition and retention is RECEIVED's UTC day. The caller has
 * checked RECEIVED lies within the app's retention and not in the future.
 */
enum MHD_Result srv_ingest_handle_at(struct MHD_Connection *conn, srv_request *req,
				     ing_format format, time_t received);

/*
 * A commit refused as stale means the policy cache's version is behind the
 * database's config version (srv_policy_refresh reads the new one): the
 * report is made again under it, at most SRV_POLICY_ATTEMPTS times in all,
 * since each policy change racing one report costs a read and a remake.
 * Whether attempt ATTEMPT (from 1), which ended with commit status RC and
 * OUTCOME, is followed by another.
 */
#define SRV_POLICY_ATTEMPTS 3
bool srv_ingest_retry_stale(int rc, st_ingest_outcome outcome, int attempt);

#endif
