/*
 * handlers.h — one endpoint per file,
 * server/api/<folder>/h_<resource>_<method>.c (the folder named after the
 * URL: docs/ARCHITECTURE.md), each exporting srv_h_<resource>_<method> (a
 * srv_handler, see server/http/routes.h). The route table in route_table.c
 * says which path, credentials and body each takes.
 */
#ifndef STALLSCOPE_SERVER_HANDLERS_H
#define STALLSCOPE_SERVER_HANDLERS_H

#include <time.h>

#include "server/http/http.h"

/* GET /healthz — 200 {"status":"ok","database":"ok"} or 503. */
enum MHD_Result srv_h_healthz_get(struct MHD_Connection *conn,
				  srv_request *req);

/* GET / and GET /web/{file} — the dashboard's page and files (web/). */
enum MHD_Result srv_h_web_get(struct MHD_Connection *conn, srv_request *req);

/* GET /metrics — Prometheus text format. */
enum MHD_Result srv_h_metrics_get(struct MHD_Connection *conn,
				  srv_request *req);

/* POST /api/v1/apps/{app}/dsyms — raw Mach-O or zip of dSYMs. */
enum MHD_Result srv_h_dsyms_post(struct MHD_Connection *conn,
				 srv_request *req);

/* GET /api/v1/apps/{app}/dsyms?limit=&cursor= */
enum MHD_Result srv_h_dsyms_get(struct MHD_Connection *conn,
				srv_request *req);

/* DELETE /api/v1/apps/{app}/dsyms/{uuid} */
enum MHD_Result srv_h_dsyms_delete(struct MHD_Connection *conn,
				   srv_request *req);

/* POST /api/v1/apps/{app}/method-mappings?app_version=&build= — Matrix's
 * methodMapping.txt (SPEC §13). */
enum MHD_Result srv_h_method_mappings_post(struct MHD_Connection *conn, srv_request *req);
/* GET /api/v1/apps/{app}/method-mappings?limit= */
enum MHD_Result srv_h_method_mappings_get(struct MHD_Connection *conn, srv_request *req);

/* POST /api/v1/ingest, …/metrickit, …/kscrash, …/ips — reports in (ingest key). */
enum MHD_Result srv_h_ingest_post(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_ingest_metrickit_post(struct MHD_Connection *conn, srv_request *req);
/* POST /api/v1/ingest/matrix — Android (Matrix TraceCanary) envelopes. */
enum MHD_Result srv_h_ingest_matrix_post(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_ingest_kscrash_post(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_ingest_ips_post(struct MHD_Connection *conn, srv_request *req);
/* POST /api/v1/apps/{app}/backfill?received_at=&format= — reports received earlier (admin). */
enum MHD_Result srv_h_backfill_post(struct MHD_Connection *conn, srv_request *req);
/* Its format=check_ins: sampling calls made at RECEIVED, counted as active
 * users of that day (server/api/ingest/backfill_check_ins.c). */
enum MHD_Result srv_backfill_check_ins(struct MHD_Connection *conn, srv_request *req,
				       time_t received);

/* GET /api/v1/sampling?user_id= (ingest key). */
enum MHD_Result srv_h_sampling_get(struct MHD_Connection *conn, srv_request *req);

/* GET|PUT /api/v1/apps/{app}/config */
enum MHD_Result srv_h_config_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_config_put(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/whitelist, PUT|DELETE …/whitelist/{user_id} */
enum MHD_Result srv_h_whitelist_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_whitelist_put(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_whitelist_delete(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/reports/{id} and …/{id}/trace (admin token of its app). */
enum MHD_Result srv_h_report_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_report_trace_get(struct MHD_Connection *conn, srv_request *req);
/* GET /api/v1/apps/{app}/reports?user_id= — a user's reports (admin). */
enum MHD_Result srv_h_user_reports_get(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/groups, …/groups/{key1}, …/groups/{key1}/{key2}/reports */
enum MHD_Result srv_h_groups_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_group_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_group_reports_get(struct MHD_Connection *conn, srv_request *req);
/* GET /api/v1/apps/{app}/groups/{key1}/tree — the group's call tree. */
enum MHD_Result srv_h_group_tree_get(struct MHD_Connection *conn, srv_request *req);
/* GET /api/v1/apps/{app}/groups/{key1}/breakdown — its reports by app
 * version, OS version, device and kind (SPEC §10.6). */
enum MHD_Result srv_h_group_breakdown_get(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/dimensions?from=&to= — the filters' known values. */
enum MHD_Result srv_h_dimensions_get(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/stats?from=&to=&version= — active, sampled and
 * stalled users per day and version. */
enum MHD_Result srv_h_stats_get(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/compare?base=&target=&from=&to= — every level-1
 * group of two versions with its affected users, rates and verdict. */
enum MHD_Result srv_h_compare_get(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/startup?from=&to=&version= and …/frames?from=&to=
 * &version=&scene=&limit= — Android startups and frame drops from their
 * per-day aggregates (SPEC §13). */
enum MHD_Result srv_h_startup_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_frames_get(struct MHD_Connection *conn, srv_request *req);

/* GET /api/v1/apps/{app}/dsyms/missing */
enum MHD_Result srv_h_dsyms_missing_get(struct MHD_Connection *conn, srv_request *req);

/* PATCH /api/v1/apps/{app}/groups/{key1} — the group's status;
 * GET …/groups/{key1}/events — its history (SPEC §11.1). */
enum MHD_Result srv_h_group_patch(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_group_events_get(struct MHD_Connection *conn, srv_request *req);

/* /api/v1/apps/{app}/webhooks[/{name}[/deliveries|/test]] (SPEC §11.2). */
enum MHD_Result srv_h_webhooks_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_webhook_put(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_webhook_delete(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_webhook_deliveries_get(struct MHD_Connection *conn, srv_request *req);
enum MHD_Result srv_h_webhook_test_post(struct MHD_Connection *conn, srv_request *req);

#endif
