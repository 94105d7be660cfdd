/*
 * report_access.h — finding a report for the /api/v1/reports/{id} routes:
 * the id must name a report of the app the admin token belongs to; any
 * other case is 404, so ids of other apps reveal nothing. And what the
 * pages of reports (a level-2 group's, a user's) share: their cursor,
 * transaction and reply.
 */
#ifndef STALLSCOPE_SERVER_REPORT_ACCESS_H
#define STALLSCOPE_SERVER_REPORT_ACCESS_H

#include <stdint.h>

#include "server/http/http.h"
#include "server/http/reply.h"
#include "store/store.h"

typedef struct srv_report_loc {
	int64_t id, app_id;
	char day[11];
} srv_report_loc;

/* SRV_OK with *OUT, or the 400/404/503 reply is queued. */
srv_rc srv_report_find(struct MHD_Connection *conn, srv_request *req, srv_report_loc *out);

/* A page of reports, newest first, keyset-paginated on (received_at, id):
 * the position after the cursor (0, 0 for the first page), the page's
 * size, and the store's JSON array (one more item than LIMIT when there
 * is a next page, each with its "cursor"). */
typedef struct srv_report_page {
	int64_t after_us, after_id, limit;
	char *json;
} srv_report_page;

/*
 * Reads cursor= ("MICROS.ID", else 400 bad_cursor) into PAGE, runs CB
 * (CLS; it fills PAGE->json, freed before each try) in transaction NAME
 * and replies {"reports":[…],"next_cursor"}; a store error is its reply,
 * and CB's 0 the 404 MISSING (NULL when CB never answers 0). PAGE->json
 * is taken.
 */
enum MHD_Result srv_reply_report_page(struct MHD_Connection *conn, const char *name, st_tx_cb cb,
				      void *cls, srv_report_page *page, const char *missing);

#endif
