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
	if (rc <= 0) {
		free(t.json); /* a commit that failed after the read */
		t.json = NULL;
	}
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no webhook %.64s", t.name);
	json_t *reply = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, reply);
}
