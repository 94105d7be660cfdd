/*
 * h_startup_get.c — GET /api/v1/apps/{app}/startup?from=&to=&version=
 * (admin token): Android startups per app version over the range and per
 * UTC day and version, cold and warm apart: count, p50/p90 (nearest rank
 * from the fine histogram, as the group replies), mean and max ms
 * (SPEC §13; st_startup_read). Days default as for /stats.
 */
#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/api/stats/measures_reply.h"
#include "server/http/pages.h"

enum MHD_Result srv_h_startup_get(struct MHD_Connection *conn, srv_request *req)
{
	st_measures_filter f = {.version = srv_query(conn, "version")};
	srv_rc frc = srv_day_range_parse(conn, &f.from, &f.to);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	return srv_measures_reply(conn, req, "startup", st_startup_read, &f);
}
