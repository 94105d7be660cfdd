/*
 * report_access.h — finding a report for the /api/v1/reports/{id} routes:
 * the id must name a report of the app the admin token belongs to; any
 * other case is 404, so ids of other apps reveal nothing.
 */
#ifndef STALLSCOPE_SERVER_REPORT_ACCESS_H
#define STALLSCOPE_SERVER_REPORT_ACCESS_H

#include <stdint.h>

#include "server/http/http.h"
#include "server/http/reply.h"

typedef struct srv_report_loc {
	int64_t id, app_id;
	char day[11];
} srv_report_loc;

/* SRV_OK with *OUT, or the 400/404/503 reply is queued. */
srv_rc srv_report_find(struct MHD_Connection *conn, srv_request *req, srv_report_loc *out);

#endif
