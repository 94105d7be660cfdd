/*
 * route_table.c — every endpoint of the server in one table; see
 * route_table.h.
 */
#include "server/api/route_table.h"

#include "server/api/handlers.h"
#include "server/http/auth.h"

static const srv_route routes[] = {
	{"GET", "/healthz", srv_h_healthz_get, 0, SRV_BODY_NONE},
	{"GET", "/metrics", srv_h_metrics_get, 0, SRV_BODY_NONE},
	{"GET", "/", srv_h_web_get, 0, SRV_BODY_NONE},
	{"GET", "/web/{file}", srv_h_web_get, 0, SRV_BODY_NONE},
	{"POST", "/api/v1/apps/{app}/dsyms", srv_h_dsyms_post, SRV_AUTH_UPLOAD, SRV_BODY_FILE},
	{"GET", "/api/v1/apps/{app}/dsyms", srv_h_dsyms_get, SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"DELETE", "/api/v1/apps/{app}/dsyms/{uuid}", srv_h_dsyms_delete,
	 SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"POST", "/api/v1/apps/{app}/method-mappings", srv_h_method_mappings_post, SRV_AUTH_UPLOAD,
	 SRV_BODY_FILE},
	{"GET", "/api/v1/apps/{app}/method-mappings", srv_h_method_mappings_get,
	 SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/dsyms/missing", srv_h_dsyms_missing_get,
	 SRV_AUTH_UPLOAD | SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"POST", "/api/v1/ingest", srv_h_ingest_post, SRV_AUTH_INGEST, SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/metrickit", srv_h_ingest_metrickit_post, SRV_AUTH_INGEST,
	 SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/kscrash", srv_h_ingest_kscrash_post, SRV_AUTH_INGEST,
	 SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/ips", srv_h_ingest_ips_post, SRV_AUTH_INGEST, SRV_BODY_MEMORY},
	{"POST", "/api/v1/ingest/matrix", srv_h_ingest_matrix_post, SRV_AUTH_INGEST,
	 SRV_BODY_MEMORY},
	{"POST", "/api/v1/apps/{app}/backfill", srv_h_backfill_post, SRV_AUTH_ADMIN,
	 SRV_BODY_MEMORY},
	{"GET", "/api/v1/sampling", srv_h_sampling_get, SRV_AUTH_INGEST, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/config", srv_h_config_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"PUT", "/api/v1/apps/{app}/config", srv_h_config_put, SRV_AUTH_ADMIN, SRV_BODY_JSON},
	{"GET", "/api/v1/apps/{app}/whitelist", srv_h_whitelist_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"PUT", "/api/v1/apps/{app}/whitelist/{user_id}", srv_h_whitelist_put, SRV_AUTH_ADMIN,
	 SRV_BODY_MEMORY},
	{"DELETE", "/api/v1/apps/{app}/whitelist/{user_id}", srv_h_whitelist_delete, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/reports/{id}", srv_h_report_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/reports/{id}/trace", srv_h_report_trace_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/reports", srv_h_user_reports_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups", srv_h_groups_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups/{key1}", srv_h_group_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups/{key1}/{key2}/reports", srv_h_group_reports_get,
	 SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups/{key1}/tree", srv_h_group_tree_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/groups/{key1}/breakdown", srv_h_group_breakdown_get,
	 SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/dimensions", srv_h_dimensions_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/stats", srv_h_stats_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/compare", srv_h_compare_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/startup", srv_h_startup_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/frames", srv_h_frames_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"PATCH", "/api/v1/apps/{app}/groups/{key1}", srv_h_group_patch, SRV_AUTH_ADMIN,
	 SRV_BODY_JSON},
	{"GET", "/api/v1/apps/{app}/groups/{key1}/events", srv_h_group_events_get, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/webhooks", srv_h_webhooks_get, SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"PUT", "/api/v1/apps/{app}/webhooks/{name}", srv_h_webhook_put, SRV_AUTH_ADMIN,
	 SRV_BODY_JSON},
	{"DELETE", "/api/v1/apps/{app}/webhooks/{name}", srv_h_webhook_delete, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
	{"GET", "/api/v1/apps/{app}/webhooks/{name}/deliveries", srv_h_webhook_deliveries_get,
	 SRV_AUTH_ADMIN, SRV_BODY_NONE},
	{"POST", "/api/v1/apps/{app}/webhooks/{name}/test", srv_h_webhook_test_post, SRV_AUTH_ADMIN,
	 SRV_BODY_NONE},
};

const srv_route *srv_routes(size_t *out_count)
{
	*out_count = sizeof routes / sizeof routes[0];
	return routes;
}

/* Splits PATH in place into at most SRV_MAX_SEGMENTS segments; -1 beyond. */
