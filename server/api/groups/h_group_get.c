/*
 * h_group_get.c — GET /api/v1/apps/{app}/groups/{key1}?from=&to=&version=
 * &os_version=&device=&kind= (admin token): one level-1 group and its
 * level-2 subgroups, {"group","subgroups"}, under the group list's filters
 * (server/api/groups/group_filter.h): the group's counts, first/last seen
 * and daily series are those of its matching reports, and only subgroups
 * with one are listed. A group with no matching report answers with zero
 * counts; 404 only when the app has no report in the group at all.
 */
#include <stdlib.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/folded_read.h"
#include "store/groups.h"

typedef struct detail_tx {
	int64_t app_id;
	const char *key;
	st_group_filter f;
	char *json;
} detail_tx;

static int detail_cb(st_conn *c, void *cls)
{
	detail_tx *t = cls;
	free(t->json);
	return st_group_detail(c, t->app_id, t->key, &t->f, &t->json);
}

enum MHD_Result srv_h_group_get(struct MHD_Connection *conn, srv_request *req)
{
	detail_tx t = {.app_id = srv_req_app(req)->id, .key = srv_req_param(req, 1)};
	srv_rc frc = srv_group_filter_parse(conn, &t.f);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	/* The day rows it reads count every report committed before it. */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "group_detail", detail_cb, &t, as_of);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no group %.32s", t.key);
	json_t *body = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, srv_with_as_of(body, as_of));
}
