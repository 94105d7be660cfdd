/*
 * h_ingest_post.c — POST /api/v1/ingest: native v1 reports (SPEC §4.1),
 * with the ingest key. Everything after the format is shared:
 * server/api/ingest/ingest.c.
 */
#include "server/api/handlers.h"
#include "server/api/ingest/ingest.h"

enum MHD_Result srv_h_ingest_post(struct MHD_Connection *conn, srv_request *req)
{
	return srv_ingest_handle(conn, req, ING_FORMAT_NATIVE);
}
