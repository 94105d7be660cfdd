/*
 * h_user_reports_get.c — GET /api/v1/apps/{app}/reports?user_id=U&from=&to=
 * &limit=&cursor= (admin token): the reports user U sent that are still
 * stored, newest first, keyset-paginated on (received_at, id) like a
 * group's reports (SPEC §10.7): {"reports":[…],"next_cursor"}. For support:
 * "what did this user hit?". From reports_user_idx (schema/046).
 */
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "store/report_lists.h"

/* A user id longer than this was never stored (ingest's own bound). */
#define USER_ID_MAX 1024

typedef struct user_reports_tx {
	int64_t app_id;
	const char *user_id, *from, *to;
	int64_t after_us, after_id, limit;
	char *json;
} user_reports_tx;

static int user_reports_cb(st_conn *c, void *cls)
{
	user_reports_tx *t = cls;
	free(t->json);
	t->json = NULL;
	/* One more than asked: whether there is a next page. */
	return st_user_reports_page(c, t->app_id, t->user_id, t->from, t->to, t->after_us,
				    t->after_id, t->limit + 1, &t->json);
}

enum MHD_Result srv_h_user_reports_get(struct MHD_Connection *conn, srv_request *req)
{
	user_reports_tx t = {.app_id = srv_req_app(req)->id, .user_id = srv_query(conn, "user_id")};
	if (!t.user_id || !t.user_id[0] || strlen(t.user_id) > USER_ID_MAX ||
	    !cm_utf8_valid(t.user_id))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "user_id: expected a user id (1 to %d bytes of UTF-8)",
				       USER_ID_MAX);
	srv_rc rc = srv_day_range_parse(conn, &t.from, &t.to);
	if (rc == SRV_OK)
		rc = srv_query_limit(conn, 50, 500, &t.limit);
	if (rc != SRV_OK)
		return srv_rc_mhd(rc);
	const char *cursor = srv_query(conn, "cursor");
	if (cursor && cursor[0]) {
		char id[24];
		if (!srv_cursor_parse(cursor, false, &t.after_us, id, sizeof id) ||
		    (t.after_id = strtoll(id, NULL, 10)) <= 0)
			return srv_reply_error(conn, ERR_BAD_CURSOR, NULL);
	}
	int src = st_run_tx("user_reports", user_reports_cb, &t);
	if (src < 0) {
		free(t.json);
		return srv_reply_store_error(conn, src);
	}
	return srv_reply_page(conn, "reports", t.json, t.limit);
}
