/*
 * h_user_reports_get.c — GET /api/v1/apps/{app}/reports?user_id=U&from=&to=
 * &limit=&cursor= (admin token): the reports user U sent that are still
 * stored, newest first, keyset-paginated on (received_at, id) like a
 * group's reports (SPEC §10.7): {"reports":[…],"next_cursor"}. For support:
 * "what did this user hit?". From reports_user_idx (schema/046). The
 * server answers 400 for a query that is not UTF-8 before any route.
 */
#include <string.h>

#include "ingest/report.h"
#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/api/reports/report_access.h"
#include "server/http/pages.h"
#include "store/report_lists.h"

typedef struct user_reports_tx {
	int64_t app_id;
	const char *user_id, *from, *to;
	srv_report_page page;
} user_reports_tx;

static int user_reports_cb(st_conn *c, void *cls)
{
	user_reports_tx *t = cls;
	/* One more than asked: whether there is a next page. */
	return st_user_reports_page(c, t->app_id, t->user_id, t->from, t->to, t->page.after_us,
				    t->page.after_id, t->page.limit + 1, &t->page.json);
}

enum MHD_Result srv_h_user_reports_get(struct MHD_Connection *conn, srv_request *req)
{
	user_reports_tx t = {.app_id = srv_req_app(req)->id, .user_id = srv_query(conn, "user_id")};
	/* Ingest's bound: a longer user id was never stored. */
	if (!t.user_id || !t.user_id[0] || strlen(t.user_id) > ING_DIMENSION_MAX)
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "user_id: expected a user id (1 to %d bytes)",
				       ING_DIMENSION_MAX);
	srv_rc rc = srv_day_range_parse(conn, &t.from, &t.to);
	if (rc == SRV_OK)
		rc = srv_query_limit(conn, 50, 500, &t.page.limit);
	if (rc != SRV_OK)
		return srv_rc_mhd(rc);
	return srv_reply_report_page(conn, "user_reports", user_reports_cb, &t, &t.page, NULL);
}
