/*
 * h_dsyms_missing_get.c — GET /api/v1/apps/{app}/dsyms/missing?limit=
 * (upload or admin token): the "missing dSYM" alert: images that frames of
 * stored reports fall in and that have no debug file, most affected
 * reports first: {"missing":[{"uuid","arch","name","reports","last_seen"}]}.
 */
#include <stdlib.h>

#include "server/handlers.h"
#include "server/pages.h"
#include "store/groups.h"

typedef struct missing_tx {
	int64_t app_id, limit;
	char *json;
} missing_tx;

static int missing_cb(st_conn *c, void *cls)
{
	missing_tx *t = cls;
	free(t->json);
	return st_dsyms_missing(c, t->app_id, t->limit, &t->json);
}

enum MHD_Result srv_h_dsyms_missing_get(struct MHD_Connection *conn, srv_request *req)
{
	missing_tx t = {.app_id = srv_req_app(req)->id};
	srv_rc rc = srv_query_limit(conn, 100, 1000, &t.limit);
	if (rc != SRV_OK)
		return srv_rc_mhd(rc);
	int src = st_run_tx("dsyms_missing", missing_cb, &t);
	if (src < 0) {
		free(t.json);
		return srv_reply_store_error(conn, src);
	}
	json_t *items = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, json_pack("{s:o}", "missing", items ? items : json_array()));
}
