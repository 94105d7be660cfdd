/* report_access.c — see report_access.h. */
#include <errno.h>
#include <stdlib.h>

#include "server/api/reports/report_access.h"
#include "store/groups.h"

static int locate_cb(st_conn *c, void *cls)
{
	srv_report_loc *l = cls;
	return st_report_locate(c, l->app_id, l->id, l->day);
}

srv_rc srv_report_find(struct MHD_Connection *conn, srv_request *req, srv_report_loc *out)
{
	const char *text = srv_req_param(req, 0);
	char *end;
	errno = 0;
	long long id = strtoll(text, &end, 10);
	if (errno || *end || id <= 0 || text[0] < '0' || text[0] > '9')
		return srv_replied(srv_reply_error(conn, ERR_NOT_FOUND, "no such report"));
	out->id = id;
	out->app_id = srv_req_app(req)->id;
	int rc = st_run_tx("report_locate", locate_cb, out);
	if (rc < 0)
		return srv_replied(srv_reply_store_error(conn, rc));
	if (rc == 0)
		return srv_replied(srv_reply_error(conn, ERR_NOT_FOUND, "no such report"));
	return SRV_OK;
}
