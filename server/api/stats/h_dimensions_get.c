/*
 * h_dimensions_get.c — GET /api/v1/apps/{app}/dimensions?from=&to= (admin
 * token): the app's known app versions, OS versions, devices and kinds
 * with the reports received on those days (all time without from/to), so
 * the dashboard's filters are pick lists:
 * {"versions","os_versions","devices","kinds"}, each
 * [{"value","reports","first_seen","last_seen"}] (st_dimensions).
 */
#include <stdlib.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/folded_read.h"
#include "store/groups.h"

typedef struct dimensions_tx {
	int64_t app_id;
	const char *from, *to;
	char *json;
} dimensions_tx;

static int dimensions_cb(st_conn *c, void *cls)
{
	dimensions_tx *t = cls;
	free(t->json);
	return st_dimensions(c, t->app_id, t->from, t->to, &t->json);
}

enum MHD_Result srv_h_dimensions_get(struct MHD_Connection *conn, srv_request *req)
{
	dimensions_tx t = {.app_id = srv_req_app(req)->id};
	srv_rc frc = srv_day_range_parse(conn, &t.from, &t.to);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	/* The pick lists count every report committed before the request:
	 * the fold writes them (schema/040). */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "dimensions", dimensions_cb, &t, as_of);
	if (rc <= 0) {
		free(t.json);
		return srv_reply_store_error(conn, rc < 0 ? rc : ST_HARD_ERROR);
	}
	json_t *body = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, srv_with_as_of(body, as_of));
}
