/*
 * h_config_get.c — GET /api/v1/apps/{app}/config (admin token): the app's
 * upload and grouping policy, defaults included.
 */
#include "server/api/config/policy_json.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

typedef struct config_read {
	int64_t app_id;
	st_app_config cfg;
} config_read;

static int read_cb(st_conn *c, void *cls)
{
	config_read *t = cls;
	st_app_config_clear(&t->cfg);
	return st_config_get(c, t->app_id, &t->cfg);
}

enum MHD_Result srv_h_config_get(struct MHD_Connection *conn, srv_request *req)
{
	config_read t = {.app_id = srv_req_app(req)->id};
	int rc = st_run_tx("config_get", read_cb, &t);
	enum MHD_Result ret = rc < 0 ? srv_reply_store_error(conn, rc)
				     : srv_reply_json(conn, 200, srv_config_json(&t.cfg));
	st_app_config_clear(&t.cfg);
	return ret;
}
