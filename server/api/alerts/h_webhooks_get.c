/*
 * h_webhooks_get.c — GET /api/v1/apps/{app}/webhooks (admin token): the
 * app's webhooks by name, {"webhooks":[{"name","url","events","format",
 * "created_at","updated_at"}]}; never their secrets.
 */
#include <stdlib.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/alerts.h"

typedef struct list_tx {
	int64_t app_id;
	char *json;
} list_tx;

static int list_cb(st_conn *c, void *cls)
{
	list_tx *t = cls;
	free(t->json);
	return st_webhooks_json(c, t->app_id, &t->json);
}

enum MHD_Result srv_h_webhooks_get(struct MHD_Connection *conn, srv_request *req)
{
	list_tx t = {.app_id = srv_req_app(req)->id};
	int rc = st_run_tx("webhooks_list", list_cb, &t);
	/* A commit that failed after the read leaves T.json to free too. */
	return srv_reply_read(conn, rc, t.json, "webhooks", "");
}
