/*
 * h_group_tree_get.c — GET /api/v1/apps/{app}/groups/{key1}/tree?from=&to=
 * &version=&os_version=&device=&kind=&level2= (admin token): the call tree
 * of the group's retained reports matching the group list's filters
 * (server/api/groups/group_filter.h), of its level-2 group level2= only
 * when given (server/service/call_tree.h, SPEC §10.4). 404 only when the
 * app has no report in the group at all; no matching report is an empty
 * tree.
 */
#include <string.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/service/call_tree.h"
#include "server/service/folded_read.h"

enum MHD_Result srv_h_group_tree_get(struct MHD_Connection *conn, srv_request *req)
{
	const char *key1 = srv_req_param(req, 1);
	st_group_filter f;
	srv_rc frc = srv_group_filter_parse(conn, &f);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	/* On the primary a group made by a report committed before this
	 * request counts it once its delta is folded: found, not 404. */
	int64_t app_id = srv_req_app(req)->id;
	char *json = NULL, as_of[SRV_AS_OF_LEN];
	int rc = srv_call_tree(app_id, key1, srv_query(conn, "level2"), &f, &json, as_of);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no group %.32s", key1);
	return srv_reply_text(conn, 200, "application/json", json, strlen(json));
}
