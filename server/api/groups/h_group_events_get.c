/*
 * h_group_events_get.c — GET /api/v1/apps/{app}/groups/{key1}/events
 * (admin token): the group's history, newest first (SPEC §11.1):
 * {"events":[{"id","event_id","at","type","status","cause","version"?,
 * "day"?,"reports"?}]}, type one of new_group, regressed, spike, resolved,
 * ignored and open, cause user, report or until. 404 when the app has no
 * such group.
 */
#include <stdlib.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/folded_read.h"
#include "store/lifecycle.h"

typedef struct events_tx {
	int64_t app_id;
	const char *key;
	char *json;
} events_tx;

static int events_cb(st_conn *c, void *cls)
{
	events_tx *t = cls;
	free(t->json);
	return st_group_events_json(c, t->app_id, t->key, &t->json);
}

enum MHD_Result srv_h_group_events_get(struct MHD_Connection *conn, srv_request *req)
{
	events_tx t = {.app_id = srv_req_app(req)->id, .key = srv_req_param(req, 1)};
	/* Events the fold decides (spikes, ignores that ran out) are there. */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "group_events", events_cb, &t, as_of);
	if (rc > 0)
		t.json = srv_json_text_with_as_of(t.json, as_of);
	/* A commit that failed after the read leaves T.json to free too. */
	return srv_reply_read(conn, rc, t.json, "group", t.key);
}
