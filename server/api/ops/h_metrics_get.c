/*
 * h_metrics_get.c — GET /metrics: the counters of metrics.h for Prometheus,
 * to peers in STALLSCOPE_METRICS_ALLOW only (it tells request rates, error
 * counts and queue depths, which outsiders have no use for).
 */
#include <microhttpd.h>

#include "common/errors.h"
#include "server/service/config.h"
#include "server/api/handlers.h"
#include "server/service/metrics.h"
#include "server/service/netmask.h"
#include "server/http/reply.h"

enum MHD_Result srv_h_metrics_get(struct MHD_Connection *conn, srv_request *req)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!srv_netmask_match(&srv_req_config(req)->metrics_allow,
			       info ? info->client_addr : NULL))
		return srv_reply_error(conn, ERR_ADDRESS_NOT_ALLOWED, NULL);
	size_t len;
	char *text = srv_metrics_render(&len);
	if (!text)
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	return srv_reply_text(conn, 200, "text/plain; version=0.0.4", text, len);
}
