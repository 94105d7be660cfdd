/*
 * h_ingest_matrix_post.c — POST /api/v1/ingest/matrix: Matrix TraceCanary
 * envelopes from Android apps (SPEC §13, docs/ANDROID.md), with the ingest
 * key. Everything after the format is shared: server/api/ingest/ingest.c.
 */
#include "server/api/handlers.h"
#include "server/api/ingest/ingest.h"

enum MHD_Result srv_h_ingest_matrix_post(struct MHD_Connection *conn, srv_request *req)
{
	return srv_ingest_handle(conn, req, ING_FORMAT_MATRIX);
}
