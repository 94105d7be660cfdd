/*
 * h_webhook_delete.c — DELETE /api/v1/apps/{app}/webhooks/{name} (admin
 * token): removes the webhook with its queued deliveries and its log;
 * 204, or 404 when there is none.
 */
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/alerts.h"

typedef struct delete_tx {
	int64_t app_id;
	const char *name;
} delete_tx;

static int delete_cb(st_conn *c, void *cls)
{
	delete_tx *t = cls;
	return st_webhook_delete(c, t->app_id, t->name);
}

enum MHD_Result srv_h_webhook_delete(struct MHD_Connection *conn, srv_request *req)
{
	delete_tx t = {.app_id = srv_req_app(req)->id, .name = srv_req_param(req, 1)};
	int rc = st_run_tx("webhook_delete", delete_cb, &t);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no webhook %.64s", t.name);
	return srv_reply_empty(conn, 204);
}
