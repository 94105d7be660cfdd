/*
 * h_stats_get.c — GET /api/v1/apps/{app}/stats?from=&to=&version= (admin
 * token): per UTC day and app version, the active, sampled and stalled
 * users, stored reports and their summed durations (SPEC §10.2;
 * st_activity_stats). Without from, the range starts at the oldest day the
 * retention window keeps; without to, it runs to the newest counted day.
 */
#include <stdlib.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/api/stats/measures_reply.h"
#include "server/http/pages.h"
#include "server/http/reply.h"
#include "server/service/folded_read.h"
#include "store/activity.h"

typedef struct stats_tx {
	int64_t app_id;
	const char *from, *to, *version;
	char oldest_kept[ING_DAY_LEN];
	char *json;
} stats_tx;

static int stats_cb(st_conn *c, void *cls)
{
	stats_tx *t = cls;
	free(t->json);
	t->json = NULL;
	const char *from = t->from;
	int rc = srv_days_from(c, t->app_id, &from, t->oldest_kept);
	return rc < 0 ? rc : st_activity_stats(c, t->app_id, from, t->to, t->version, &t->json);
}

enum MHD_Result srv_h_stats_get(struct MHD_Connection *conn, srv_request *req)
{
	stats_tx t = {.app_id = srv_req_app(req)->id, .version = srv_query(conn, "version")};
	srv_rc frc = srv_day_range_parse(conn, &t.from, &t.to);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	/* The reports' activity is the fold's (schema/040): counted first. */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "stats", stats_cb, &t, as_of);
	if (rc < 0) {
		free(t.json);
		return srv_reply_store_error(conn, rc);
	}
	/* PostgreSQL's JSON text is spaced: written again compact, like
	 * every other reply. */
	json_t *body = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, srv_with_as_of(body, as_of));
}
