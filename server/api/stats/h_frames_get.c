/*
 * h_frames_get.c — GET /api/v1/apps/{app}/frames?from=&to=&version=&scene=
 * &limit= (admin token): Android frame drops per scene and app version over
 * the range: elements, frames and dropped frames per Matrix drop level,
 * the frozen frames' share and the mean fps, worst (frozen + high frames)
 * first, at most limit (100 by default, 500 at most: scenes are the
 * client's strings) (SPEC §13; st_frames_read). Days default as for /stats.
 */
#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/api/stats/measures_reply.h"
#include "server/http/pages.h"

enum MHD_Result srv_h_frames_get(struct MHD_Connection *conn, srv_request *req)
{
	st_measures_filter f = {.version = srv_query(conn, "version"),
				.scene = srv_query(conn, "scene")};
	srv_rc frc = srv_day_range_parse(conn, &f.from, &f.to);
	if (frc == SRV_OK)
		frc = srv_query_limit(conn, 100, 500, &f.limit);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	return srv_measures_reply(conn, req, "frames", st_frames_read, &f);
}
