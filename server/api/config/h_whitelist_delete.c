/*
 * h_whitelist_delete.c — DELETE /api/v1/apps/{app}/whitelist/{user_id}
 * (admin token): 204, or 404 when the user was not whitelisted.
 */
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

typedef struct delete_tx {
	int64_t app_id;
	const char *user;
} delete_tx;

static int delete_cb(st_conn *c, void *cls)
{
	delete_tx *t = cls;
	return st_whitelist_delete(c, t->app_id, t->user);
}

enum MHD_Result srv_h_whitelist_delete(struct MHD_Connection *conn, srv_request *req)
{
	delete_tx t = {srv_req_app(req)->id, srv_req_param(req, 1)};
	int rc = st_run_tx("whitelist_delete", delete_cb, &t);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "%s is not whitelisted", t.user);
	return srv_reply_empty(conn, 204);
}
