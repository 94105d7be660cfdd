/*
 * handlers.h — one endpoint per file, server/h_<resource>_<method>.c, each
 * exporting srv_h_<resource>_<method> (a srv_handler, see http.h). The
 * route table in routes.c says which path, credentials and body each takes.
 */
#ifndef STALLSCOPE_SERVER_HANDLERS_H
#define STALLSCOPE_SERVER_HANDLERS_H

#include "server/http.h"

/* GET /healthz — 200 {"status":"ok","database":"ok"} or 503. */
enum MHD_Result srv_h_healthz_get(struct MHD_Connection *conn,
				  srv_request *req);

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

#endif
