/*
 * h_metrics_get.c — GET /metrics: the counters of metrics.h for Prometheus,
 * to clients in STALLSCOPE_METRICS_ALLOW only (it tells request rates, error
 * counts and queue depths, which outsiders have no use for). Behind a proxy
 * in STALLSCOPE_TRUSTED_PROXIES the client is the one its X-Forwarded-For
 * names, so the proxy's own address in the list does not open it to
 * everyone the proxy serves.
 */
#include <microhttpd.h>
#include <strings.h>

#include "common/errors.h"
#include "server/service/config.h"
#include "server/api/handlers.h"
#include "server/service/metrics.h"
#include "server/service/netmask.h"
#include "server/http/reply.h"

typedef struct forwarded {
	const char *v[SRV_FORWARDED_MAX + 1];
	size_t n; /* up to SRV_FORWARDED_MAX + 1: one more says "too many" */
} forwarded;

static enum MHD_Result collect_forwarded(void *cls, enum MHD_ValueKind kind, const char *key,
					 const char *value)
{
	(void)kind;
	forwarded *f = cls;
	if (strcasecmp(key, "X-Forwarded-For") != 0)
		return MHD_YES;
	f->v[f->n++] = value ? value : "";
	return f->n <= SRV_FORWARDED_MAX ? MHD_YES : MHD_NO;
}

enum MHD_Result srv_h_metrics_get(struct MHD_Connection *conn, srv_request *req)
{
	const srv_config *cfg = srv_req_config(req);
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	forwarded f = {.n = 0};
	if (cfg->trusted_proxies.n > 0)
		MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_forwarded, &f);
	struct sockaddr_storage client;
	srv_netmask_client(&cfg->trusted_proxies, info ? info->client_addr : NULL, f.v, f.n,
			   &client);
	if (!srv_netmask_match(&cfg->metrics_allow, (const struct sockaddr *)&client))
		return srv_reply_error(conn, ERR_ADDRESS_NOT_ALLOWED, NULL);
	size_t len;
	char *text = srv_metrics_render(&len);
	if (!text)
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	return srv_reply_text(conn, 200, "text/plain; version=0.0.4", text, len);
}
