/*
 * h_method_mappings_post.c — POST /api/v1/apps/{app}/method-mappings
 * ?app_version=V&build=B (upload token; SPEC §13): the body, streamed to a
 * temp file by http.c, is Matrix's methodMapping.txt, plain or gzip. The
 * conversion reads the whole file, so it runs on the worker pool
 * (mapping_import.h). 201 when stored or replaced, 200 when the same text
 * was stored already.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "ingest/report.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/http/reply.h"
#include "server/service/mapping_import.h"
#include "server/service/metrics.h"

static void job_run(void *cls)
{
	srv_mapping_import_run(cls);
}

/* Query parameter NAME: 1 to ING_DIMENSION_MAX bytes, no control byte
 * (the same rule as a report's app version). Copied to OUT. */
static bool take_param(struct MHD_Connection *conn, const char *name, char *out, size_t cap)
{
	const char *v = srv_query(conn, name);
	size_t len = v ? strlen(v) : 0;
	if (len == 0 || len > ING_DIMENSION_MAX || len >= cap)
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return false;
	memcpy(out, v, len + 1);
	return true;
}

static enum MHD_Result reply(struct MHD_Connection *conn, srv_request *req,
			     const srv_mapping_import *job)
{
	srv_metrics_upload(job->err == ERR_NONE);
	if (job->err != ERR_NONE) {
		cm_log(CM_CLIENT, "%s method-mappings: %s", srv_req_id(req), job->msg);
		return srv_reply_error(conn, job->err, "%s", job->msg);
	}
	const st_debug_file *f = &job->stored;
	cm_log(CM_INFO, "%s method-mappings: app %s %s (%s): %s", srv_req_id(req),
	       job->app.bundle_id, f->app_version, f->build, job->created ? "stored" : "present");
	json_t *mapping =
		json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:s}", "app_version", f->app_version, "build",
			  f->build, "uuid", f->uuid, "methods", (json_int_t)f->functions,
			  "file_size", (json_int_t)f->file_size, "created_at", f->created_at,
			  "status", job->created ? "stored" : "unchanged");
	return srv_reply_json(conn, job->created ? 201 : 200,
			      json_pack("{s:o,s:I,s:I}", "mapping", mapping, "lines",
					(json_int_t)job->lines, "skipped_lines",
					(json_int_t)job->skipped));
}

enum MHD_Result srv_h_method_mappings_post(struct MHD_Connection *conn, srv_request *req)
{
	srv_mapping_import *job = calloc(1, sizeof *job);
	if (!job)
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	enum MHD_Result r;
	uint64_t size;
	const char *path = srv_req_body_path(req, &size);
	if (!take_param(conn, "app_version", job->app_version, sizeof job->app_version) ||
	    !take_param(conn, "build", job->build, sizeof job->build)) {
		r = srv_reply_error(conn, ERR_BAD_QUERY,
				    "app_version and build are required: 1 to %d bytes each, "
				    "no control characters",
				    ING_DIMENSION_MAX);
	} else if (size == 0) {
		r = srv_reply_error(conn, ERR_EMPTY_BODY,
				    "send Matrix's methodMapping.txt (plain or gzip) as the body");
	} else {
		job->cfg = srv_req_config(req);
		job->app = *srv_req_app(req);
		snprintf(job->body_path, sizeof job->body_path, "%s", path);
		r = srv_req_run_on_worker(req, job_run, job)
			    ? reply(conn, req, job)
			    : srv_reply_error(conn, ERR_SHUTTING_DOWN, NULL);
	}
	free(job);
	return r;
}
