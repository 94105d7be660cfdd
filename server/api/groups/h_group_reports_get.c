/*
 * h_group_reports_get.c — GET /api/v1/apps/{app}/groups/{key1}/{key2}/
 * reports?from=&to=&version=&os_version=&device=&kind=&limit=&cursor=
 * (admin token): the reports of a level-2 group that match the group
 * list's filters (server/api/groups/group_filter.h), newest first,
 * keyset-paginated on (received_at, id). 404 when the app has no such
 * level-2 group under KEY1, as the group's detail answers.
 */
#include <stdio.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/api/reports/report_access.h"
#include "store/groups.h"
#include "store/report_lists.h"

typedef struct reports_tx {
	int64_t app_id;
	const char *key1, *key2;
	st_group_filter f;
	srv_report_page page;
} reports_tx;

static int reports_cb(st_conn *c, void *cls)
{
	reports_tx *t = cls;
	int found = st_group2_exists(c, t->app_id, t->key1, t->key2);
	if (found <= 0)
		return found;
	return st_group_reports_page(c, t->app_id, t->key1, t->key2, &t->f, t->page.after_us,
				     t->page.after_id, t->page.limit + 1, &t->page.json);
}

enum MHD_Result srv_h_group_reports_get(struct MHD_Connection *conn, srv_request *req)
{
	reports_tx t = {.app_id = srv_req_app(req)->id,
			.key1 = srv_req_param(req, 1),
			.key2 = srv_req_param(req, 2)};
	srv_rc rc = srv_group_page_parse(conn, &t.f, &t.page.limit);
	if (rc != SRV_OK)
		return srv_rc_mhd(rc);
	char missing[80];
	snprintf(missing, sizeof missing, "no group %.32s/%.32s", t.key1, t.key2);
	return srv_reply_report_page(conn, "group_reports", reports_cb, &t, &t.page, missing);
}
