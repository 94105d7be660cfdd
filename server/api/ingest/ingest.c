/*
 * ingest.c — the four ingest endpoints' shared handler; see ingest.h and
 * docs/STORAGE.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/json.h"
#include "common/log.h"
#include "ingest/decode.h"
#include "ingest/sampling.h"
#include "server/api/ingest/ingest.h"
#include "server/http/reply.h"
#include "server/service/clock.h"
#include "server/service/ingest_commit.h"
#include "server/service/measure_commit.h"
#include "server/service/policy_cache.h"
#include "server/service/stored_form.h"

bool srv_ingest_retry_stale(int rc, st_ingest_outcome outcome, int attempt)
{
	return rc >= 0 && outcome == ST_INGEST_STALE && attempt < SRV_POLICY_ATTEMPTS;
}

/* ---- the request ----------------------------------------------------------- */

static json_t *error_json(cm_err code, const char *message)
{
	return json_pack("{s:s,s:s}", "code", cm_err_code(code), "message",
			 message && message[0] ? message : cm_err_message(code));
}

static int reject(json_t *rejected, const char *report_id, cm_err code, const char *message)
{
	json_t *e = json_pack("{s:o,s:o}", "report_id",
			      report_id ? json_string(report_id) : json_null(), "error",
			      error_json(code, message));
	return e ? json_array_append_new(rejected, e) : -1;
}

enum MHD_Result srv_ingest_handle(struct MHD_Connection *conn, srv_request *req, ing_format format)
{
	return srv_ingest_handle_at(conn, req, format, srv_now());
}

/*
 * One request's reports on their way to the store: the policy, lookups and
 * symbol files they share, and what the reply will say.
 */
typedef struct ingest_run {
	const srv_config *cfg;
	const st_app *app;
	ing_batch *batch;
	ing_memo *memo;
	srv_symbol_set *set;
	const ing_report **reports;
	st_app_config policy;
	ing_group_rules rules;
	char day[ING_DAY_LEN], at[32];
	json_t *accepted, *rejected;
	/* The first refusal of a lone report decides the reply's status. */
	cm_err single_code;
	char single_message[256];
} ingest_run;

/* Decodes and parses the body into *BATCH; else replies and returns false. */
static bool read_batch(struct MHD_Connection *conn, srv_request *req, ing_format format,
		       ing_batch **batch, enum MHD_Result *ret)
{
	size_t len = 0;
	const char *body = srv_req_body(req, &len);
	if (!body || len == 0) {
		*ret = srv_reply_error(conn, ERR_EMPTY_BODY, NULL);
		return false;
	}
	const char *encoding =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
	const char *user = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Stallscope-User");
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	ing_error ierr;
	if (ing_decode_body(encoding, (const uint8_t *)body, len,
			    srv_req_config(req)->max_decompressed, &plain, &plain_len,
			    &ierr) != 0) {
		*ret = srv_reply_error(conn, ierr.code, "%s", ierr.message);
		return false;
	}
	int prc = ing_parse(format, (const char *)plain, plain_len, NULL,
			    user && user[0] ? user : NULL, batch, &ierr);
	free(plain);
	if (prc != 0) {
		*ret = srv_reply_error(conn, ierr.code, "%s", ierr.message);
		return false;
	}
	return true;
}

/* The app's policy and grouping rules, read or refreshed into RUN. */
static int use_policy(ingest_run *run, bool refresh)
{
	st_app_config_clear(&run->policy);
	int rc = refresh ? srv_policy_refresh(run->app->id, &run->policy)
			 : srv_policy_get(run->app->id, &run->policy);
	if (rc < 0) {
		memset(&run->policy, 0, sizeof run->policy);
		return rc;
	}
	if (srv_grouping_rules(run->policy.grouping_rules, run->batch->arena, &run->rules) != 0)
		return ST_HARD_ERROR;
	return rc;
}

/* The shared lookups, the policy and the symbol files of every parsed report. */
static int prepare(ingest_run *run, time_t received)
{
	ing_batch *batch = run->batch;
	ing_utc_day(received, run->day);
	srv_format_time(received, run->at, sizeof run->at);
	run->accepted = json_array();
	run->rejected = json_array();
	run->memo = ing_memo_new();
	if (!run->memo)
		return ST_HARD_ERROR;
	int rc = use_policy(run, false);
	if (rc < 0)
		return rc;
	run->reports = calloc(batch->nentries ? batch->nentries : 1, sizeof *run->reports);
	if (!run->reports)
		return ST_HARD_ERROR;
	size_t n = 0;
	for (size_t i = 0; i < batch->nentries; i++)
		if (batch->entries[i].report)
			run->reports[n++] = batch->entries[i].report;
	return srv_symbol_set_load(run->cfg->data_dir, run->app->id, run->reports, n, false,
				   &run->set);
}

/* A refusal of REPORT_ID: MESSAGE in the batch's list (NULL = the code's
 * own), REPLY_MESSAGE in the reply when it is the request's only report. */
static int refuse(ingest_run *run, const char *report_id, cm_err code, const char *message,
		  const char *reply_message)
{
	run->single_code = code;
	snprintf(run->single_message, sizeof run->single_message, "%s", reply_message);
	return reject(run->rejected, report_id, code, message) < 0 ? ST_HARD_ERROR : 0;
}

/* R made under the current policy and committed once; the form is dropped. */
static int commit_once(ingest_run *run, const ing_report *r, st_ingest_outcome *result, int64_t *id)
{
	srv_stored_form form;
	if (srv_stored_form_make(run->set, r, &run->rules, run->memo, run->batch->arena, &form) !=
	    0)
		return ST_HARD_ERROR;
	st_new_report row = {
		.received_day = run->day,
		.received_at = run->at,
		.sampled = ing_sampled(run->app->bundle_id, r->user_id, run->day,
				       run->policy.sample_rate),
		.config_version = run->policy.version,
		.report_id = r->report_id,
		.user_id = r->user_id,
		.kind = ing_kind_name(r->kind),
		.source = r->source ? r->source : "native",
		.app_version = r->app_version,
		.build = r->build,
		.os = r->os,
		.os_version = r->os_version,
		.os_build = r->os_build,
		.device = r->device,
		.client_timestamp = r->timestamp,
		.duration_ms = r->duration_ms,
		.key1 = form.s.grouping.key1,
		.key2 = form.s.grouping.key2,
		.frames1 = form.frames1,
		.frames2 = form.frames2,
		.pending = form.pending,
		.waits = form.waits,
		.culprit = form.culprit,
		.raw = srv_stored_raw(&form),
		.symbolized = srv_stored_symbolized(&form),
	};
	int rc = srv_ingest_commit(run->app->id, &row, result, id);
	srv_stored_form_clear(&form);
	return rc;
}

/*
 * Stores R. The policy may have changed since it was cached: then nothing
 * was stored, and the report is made again under the new one.
 */
static int store_report(ingest_run *run, const ing_report *r, st_ingest_outcome *result,
			int64_t *id)
{
	for (int attempt = 1;; attempt++) {
		*result = ST_INGEST_STALE;
		int rc = commit_once(run, r, result, id);
		if (!srv_ingest_retry_stale(rc, *result, attempt))
			return rc;
		if ((rc = use_policy(run, true)) < 0)
			return rc;
	}
}

/* Adds what became of R to the reply. */
static int record_outcome(ingest_run *run, const ing_report *r, st_ingest_outcome result,
			  int64_t id)
{
	switch (result) {
	case ST_INGEST_STORED:
	case ST_INGEST_DUPLICATE:
		return json_array_append_new(run->accepted,
					     json_pack("{s:s,s:I}", "report_id", r->report_id, "id",
						       (json_int_t)id)) < 0
			       ? ST_HARD_ERROR
			       : 0;
	case ST_INGEST_STALE:
		/* The policy changed under every attempt: 503, and the
		 * client's retry is safe. */
		return ST_SOFT_ERROR;
	case ST_INGEST_NOT_SAMPLED:
		return refuse(run, r->report_id, ERR_NOT_SAMPLED, NULL,
			      "this user is not sampled today");
	case ST_INGEST_QUOTA:
		return refuse(run, r->report_id, ERR_QUOTA_EXHAUSTED, NULL,
			      "this user's daily report quota is used up");
	}
	return ST_HARD_ERROR;
}

/* An Android measurement (SPEC §13): counted once under the policy's
 * sampling and whitelist; accepted as {"report_id": its key, "measure"}. */
static int ingest_measure(ingest_run *run, const ing_measure *m)
{
	if (!m->user_id) {
		const char *why = "user_id: missing (set it in the envelope or send "
				  "X-Stallscope-User): sampling needs a user";
		return refuse(run, m->key, ERR_BAD_FIELD, why, why);
	}
	bool sampled =
		ing_sampled(run->app->bundle_id, m->user_id, run->day, run->policy.sample_rate);
	srv_measure_outcome out;
	int rc = srv_measure_commit(run->app->id, run->day, run->at, sampled, m, &out);
	if (rc < 0)
		return rc;
	if (out == SRV_MEASURE_NOT_SAMPLED)
		return refuse(run, m->key, ERR_NOT_SAMPLED, NULL, "this user is not sampled today");
	json_t *a = json_pack("{s:s,s:s}", "report_id", m->key, "measure",
			      m->kind == ING_MEASURE_STARTUP ? "startup" : "frames");
	return json_array_append_new(run->accepted, a) < 0 ? ST_HARD_ERROR : 0;
}

static int ingest_entry(ingest_run *run, const ing_entry *e)
{
	if (!e->report && e->measure)
		return ingest_measure(run, e->measure);
	if (!e->report)
		return refuse(run, e->report_id, e->error.code, e->error.message, e->error.message);
	const ing_report *r = e->report;
	/* The parsers refuse a report without its idempotency key. */
	if (NEVER(!r->report_id))
		return ST_HARD_ERROR;
	if (!r->user_id) {
		const char *why = "user_id: missing (set it in the report or send "
				  "X-Stallscope-User): sampling needs a user";
		return refuse(run, r->report_id, ERR_BAD_FIELD, why, why);
	}
	st_ingest_outcome result;
	int64_t id = 0;
	int rc = store_report(run, r, &result, &id);
	return rc < 0 ? rc : record_outcome(run, r, result, id);
}

static enum MHD_Result reply(struct MHD_Connection *conn, const ingest_run *run, int rc)
{
	/* Reports committed before a failure stay; the client's retry finds
	 * them by report_id. */
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (!run->batch->is_batch && json_array_size(run->rejected) == 1)
		return srv_reply_error(conn, run->single_code, "%s", run->single_message);
	json_t *body = json_pack("{s:O,s:O}", "accepted", run->accepted, "rejected", run->rejected);
	return srv_reply_json(conn, 202, body);
}

static void run_clear(ingest_run *run)
{
	json_decref(run->accepted);
	json_decref(run->rejected);
	ing_memo_free(run->memo);
	srv_symbol_set_free(run->set);
	free(run->reports);
	st_app_config_clear(&run->policy);
	ing_batch_free(run->batch);
}

enum MHD_Result srv_ingest_handle_at(struct MHD_Connection *conn, srv_request *req,
				     ing_format format, time_t received)
{
	ingest_run run = {.cfg = srv_req_config(req), .app = srv_req_app(req)};
	enum MHD_Result ret;
	if (NEVER(received > srv_now()))
		return srv_reply_error(conn, ERR_INTERNAL, NULL);
	if (!read_batch(conn, req, format, &run.batch, &ret))
		return ret;
	int rc = prepare(&run, received);
	for (size_t i = 0; rc >= 0 && i < run.batch->nentries; i++)
		rc = ingest_entry(&run, &run.batch->entries[i]);
	ret = reply(conn, &run, rc);
	run_clear(&run);
	return ret;
}
