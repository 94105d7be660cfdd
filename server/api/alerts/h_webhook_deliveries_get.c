/*
 * h_webhook_deliveries_get.c — GET
 * /api/v1/apps/{app}/webhooks/{name}/deliveries (admin token): the last
 * 100 attempts, newest first, {"deliveries":[{"at","event_id","type",
 * "attempt","result","status","error"}]} (result delivered, failed or
 * gave_up). 404 when there is no such webhook.
 */
#include <stdlib.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/alerts.h"

typedef struct deliveries_tx {
	int64_t app_id;
	const char *name;
	char *json;
} deliveries_tx;

static int deliveries_cb(st_conn *c, void *cls)
{
	deliveries_tx *t = cls;
	free(t->json);
	return st_webhook_deliveries_json(c, t->app_id, t->name, &t->json);
}

enum MHD_Result srv_h_webhook_deliveries_get(struct MHD_Connection *conn, srv_request *req)
{
	deliveries_tx t = {.app_id = srv_req_app(req)->id, .name = srv_req_param(req, 1)};
	int rc = st_run_tx("webhook_deliveries", deliveries_cb, &t);
	/* A commit that failed after the read leaves T.json to free too. */
	return srv_reply_read(conn, rc, t.json, "webhook", t.name);
}
