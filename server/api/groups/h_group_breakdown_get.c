/*
 * h_group_breakdown_get.c — GET /api/v1/apps/{app}/groups/{key1}/breakdown
 * ?from=&to=&version=&os_version=&device=&kind=&level2= (admin token): how
 * the group's reports matching the group list's filters
 * (server/api/groups/group_filter.h) split by app version, OS version,
 * device and kind, of its level-2 group level2= only when given
 * (store/group_breakdown.h, SPEC §10.6). 404 when the app has no report in
 * the group at all, or level2= is not one of the group's level-2 groups; no
 * matching report is zero counts and empty lists.
 */
#include <stdlib.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/http/reply.h"
#include "server/service/folded_read.h"
#include "store/group_breakdown.h"

typedef struct breakdown_tx {
	int64_t app_id;
	const char *key1, *key2;
	st_group_filter f;
	char *json;
} breakdown_tx;

static int breakdown_cb(st_conn *c, void *cls)
{
	breakdown_tx *t = cls;
	free(t->json);
	return st_group_breakdown(c, t->app_id, t->key1, t->key2, &t->f, &t->json);
}

enum MHD_Result srv_h_group_breakdown_get(struct MHD_Connection *conn, srv_request *req)
{
	breakdown_tx t = {.app_id = srv_req_app(req)->id,
			  .key1 = srv_req_param(req, 1),
			  .key2 = srv_query(conn, "level2")};
	srv_rc frc = srv_group_filter_parse(conn, &t.f);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	/* The facet and combination rows count every report committed
	 * before the request once its delta is folded. */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "group_breakdown", breakdown_cb, &t, as_of);
	if (rc > 0)
		t.json = srv_json_text_with_as_of(t.json, as_of);
	/* 0: key1 unknown, or level2= not one of its level-2 groups. */
	return srv_reply_read(conn, rc, t.json, t.key2 ? "level-2 group of group" : "group",
			      t.key1);
}
