/*
 * ingest_pipeline.h — what the four ingest endpoints share: decode the
 * body, parse it in the endpoint's format, symbolize every report, apply
 * the upload policy and store each report in one statement that is its own
 * transaction (docs/STORAGE.md), then answer 202 with what was accepted and
 * what was refused — or, for a request holding a single report that is refused, that
 * refusal's own status (SPEC §7).
 *
 * Also the pieces reprocessing reuses: symbolizing a report into the JSON
 * stored with it, its group identities and its waits.
 */
#ifndef STALLSCOPE_SERVER_INGEST_PIPELINE_H
#define STALLSCOPE_SERVER_INGEST_PIPELINE_H

#include <microhttpd.h>
#include <time.h>

#include "ingest/parse.h"
#include "server/http.h"
#include "server/symbols.h"
#include "store/reports.h"

enum MHD_Result srv_ingest_handle(struct MHD_Connection *conn, srv_request *req,
				  ing_format format);

/*
 * The same with RECEIVED as the time the reports arrived (the admin-only
 * backfill, server/h_backfill_post.c): their day for sampling, quota,
 * partition and retention is RECEIVED's UTC day. The caller has checked
 * RECEIVED lies within the app's retention and not in the future.
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

/*
 * A report symbolized for storage: the JSON texts (malloc) and, pointing
 * into them or into the arena, what counting it into groups needs.
 */
typedef struct srv_stored_form {
	char *raw;        /* the report in native v1 form */
	char *symbolized; /* {"images","threads","stack","key1","key2","frames"};
			   * a stack with "thread" has no "frames" */
	char *frames1, *frames2; /* identities of both levels, JSON arrays */
	char *waits;             /* the images it waits for, as st_report_waits_add takes */
	ing_symbolized s;
	ing_image_symbols *images; /* arena */
	bool pending;
} srv_stored_form;

/*
 * Symbolizes R with the files of SET and the app's grouping RULES (NULL =
 * none) into OUT, sharing lookups with earlier reports through MEMO (NULL
 * = none; see ing_memo for what a shared memo asks of ARENA and SET).
 * Returns 0, or -1 when out of memory.
 */
int srv_stored_form_make(srv_symbol_set *set, const ing_report *r,
			 const ing_group_rules *rules, ing_memo *memo, ing_arena *arena,
			 srv_stored_form *out);
void srv_stored_form_clear(srv_stored_form *f);

/*
 * The app's grouping rules from their JSON (app_config.grouping_rules),
 * copied into ARENA. Returns 0 (unreadable rules count as none) or -1 on
 * memory exhaustion.
 */
int srv_grouping_rules(const char *json, ing_arena *arena, ing_group_rules *out);

#endif
