/*
 * h_dsyms_post.c — POST /api/v1/apps/{app}/dsyms (upload token): the body,
 * already streamed to a temp file by http.c, is a raw Mach-O (thin or fat:
 * a dSYM's DWARF file or a plain binary; `?name=` names it) or a zip of
 * .dSYM bundles. Building symcaches can take long, so the import runs on
 * the worker pool (dsym_import.h). 201 when a slice was added or upgraded, 200
 * when every slice was stored already.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "server/service/dsym_import.h"
#include "server/api/handlers.h"
#include "server/service/metrics.h"
#include "server/http/reply.h"

static void job_run(void *cls)
{
	srv_dsym_import_run(cls);
}

/* The reply to the finished JOB; takes its files. */
static enum MHD_Result reply(struct MHD_Connection *conn, srv_request *req, srv_dsym_import *job)
{
	if (job->err != ERR_NONE) {
		srv_metrics_upload(false);
		/* A library's error text may name the temp file (or what was
		 * extracted beside it), and so where the data dir is: the log
		 * keeps it, the client gets the code's text. */
		if (!strstr(job->msg, job->body_path))
			return srv_reply_error(conn, job->err, "%s", job->msg);
		cm_log(CM_CLIENT, "%s dsyms: %s", srv_req_id(req), job->msg);
		return srv_reply_error(conn, job->err, NULL);
	}
	srv_metrics_upload(true);
	size_t n = json_array_size(job->files);
	cm_log(CM_INFO, "%s dsyms: app %s: %zu slice%s, %s", srv_req_id(req), job->app.bundle_id, n,
	       n == 1 ? "" : "s", job->created ? "stored" : "all present already");
	json_t *files = job->files;
	job->files = NULL;
	return srv_reply_json(conn, job->created ? 201 : 200, json_pack("{s:o}", "files", files));
}

enum MHD_Result srv_h_dsyms_post(struct MHD_Connection *conn, srv_request *req)
{
	uint64_t size;
	const char *path = srv_req_body_path(req, &size);
	if (size == 0) {
		srv_metrics_upload(false);
		return srv_reply_error(conn, ERR_EMPTY_BODY,
				       "send a Mach-O file or a zip of .dSYM "
				       "bundles as the request body");
	}
	srv_dsym_import *job = calloc(1, sizeof *job);
	if (!job)
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	job->cfg = srv_req_config(req);
	job->app = *srv_req_app(req);
	snprintf(job->body_path, sizeof job->body_path, "%s", path);
	srv_dsym_sanitize_name(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "name"),
			       job->name);
	enum MHD_Result r = srv_req_run_on_worker(req, job_run, job)
				    ? reply(conn, req, job)
				    : srv_reply_error(conn, ERR_SHUTTING_DOWN, NULL);
	json_decref(job->files);
	free(job);
	return r;
}
