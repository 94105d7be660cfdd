/*
 * h_report_get.c — GET /api/v1/reports/{id} (admin token of the report's
 * app): the full report: metadata, images with their status (found,
 * missing, malformed), every thread symbolized with a status per frame,
 * the representative stack, its group keys and identities, and whether it
 * waits for symbols.
 */
#include <stdlib.h>

#include "server/api/handlers.h"
#include "server/api/report_access.h"
#include "store/groups.h"

typedef struct get_tx {
	srv_report_loc loc;
	char *json;
} get_tx;

static int get_cb(st_conn *c, void *cls)
{
	get_tx *t = cls;
	free(t->json);
	return st_report_json(c, t->loc.app_id, t->loc.day, t->loc.id, &t->json);
}

enum MHD_Result srv_h_report_get(struct MHD_Connection *conn, srv_request *req)
{
	get_tx t = {0};
	srv_rc found = srv_report_find(conn, req, &t.loc);
	if (found != SRV_OK)
		return srv_rc_mhd(found);
	int rc = st_run_tx("report_get", get_cb, &t);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0) /* purged between the two reads */
		return srv_reply_error(conn, ERR_NOT_FOUND, "no such report");
	json_t *body = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, body);
}
