/*
 * h_healthz_get.c — GET /healthz: is this instance able to serve? It is
 * when the database answers; load balancers and `make run` poll it.
 */
#include "common/errors.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"

enum MHD_Result srv_h_healthz_get(struct MHD_Connection *conn, srv_request *req)
{
	(void)req;
	int rc = st_ping();
	if (rc < 0)
		return srv_reply_json(conn, 503,
				      json_pack("{s:s,s:s,s:{s:s,s:s}}", "status", "error",
						"database", "unavailable", "error", "code",
						cm_err_code(ERR_DB_UNAVAILABLE), "message",
						cm_err_message(ERR_DB_UNAVAILABLE)));
	return srv_reply_json(conn, 200, json_pack("{s:s,s:s}", "status", "ok", "database", "ok"));
}
