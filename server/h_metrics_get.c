/* h_metrics_get.c — GET /metrics: the counters of metrics.h for Prometheus. */
#include "common/errors.h"
#include "server/handlers.h"
#include "server/metrics.h"
#include "server/reply.h"

enum MHD_Result srv_h_metrics_get(struct MHD_Connection *conn,
				  srv_request *req)
{
	(void)req;
	size_t len;
	char *text = srv_metrics_render(&len);
	if (!text)
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	return srv_reply_text(conn, 200, "text/plain; version=0.0.4", text,
			      len);
}
