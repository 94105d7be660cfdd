/*
 * ingest.c — the four ingest endpoints' shared handler; see ingest.h and
 * docs/STORAGE.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/log.h"
#include "ingest/decode.h"
#include "ingest/sampling.h"
#include "server/api/ingest.h"
#include "server/http/reply.h"
#include "server/service/clock.h"
#include "server/service/ingest_commit.h"
#include "server/service/policy_cache.h"
#include "server/service/stored_form.h"

/* Policy changes racing one report: each costs a read and a remake. */
#define POLICY_ATTEMPTS 3

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

enum MHD_Result srv_ingest_handle(struct MHD_Connection *conn, srv_request *req,
				  ing_format format)
{
	return srv_ingest_handle_at(conn, req, format, srv_now());
}

enum MHD_Result srv_ingest_handle_at(struct MHD_Connection *conn, srv_request *req,
				     ing_format format, time_t received)
{
	const srv_config *cfg = srv_req_config(req);
	const st_app *app = srv_req_app(req);
	size_t len = 0;
	const char *body = srv_req_body(req, &len);
	if (!body || len == 0)
		return srv_reply_error(conn, ERR_EMPTY_BODY, NULL);
	const char *encoding =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Encoding");
	const char *user =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Stallscope-User");
	uint8_t *plain = NULL;
	size_t plain_len = 0;
	ing_error ierr;
	if (ing_decode_body(encoding, (const uint8_t *)body, len, cfg->max_decompressed, &plain,
			    &plain_len, &ierr) != 0)
		return srv_reply_error(conn, ierr.code, "%s", ierr.message);
	ing_batch *batch = NULL;
	int prc = ing_parse(format, (const char *)plain, plain_len, NULL,
			    user && user[0] ? user : NULL, &batch, &ierr);
	free(plain);
	if (prc != 0)
		return srv_reply_error(conn, ierr.code, "%s", ierr.message);

	enum MHD_Result ret;
	json_t *accepted = json_array(), *rejected = json_array();
	srv_symbol_set *set = NULL;
	/* The batch's reports share their lookups: one arena, one symbol set. */
	ing_memo *memo = ing_memo_new();
	st_app_config policy;
	int rc = memo ? srv_policy_get(app->id, &policy) : ST_HARD_ERROR;
	if (rc < 0)
		memset(&policy, 0, sizeof policy);
	ing_group_rules rules;
	memset(&rules, 0, sizeof rules);
	if (rc >= 0 && srv_grouping_rules(policy.grouping_rules, batch->arena, &rules) != 0)
		rc = ST_HARD_ERROR;

	char day[ING_DAY_LEN], at[32];
	ing_utc_day(received, day);
	srv_format_time(received, at, sizeof at);
	const ing_report **reports = NULL;
	size_t nreports = 0;
	if (rc >= 0) {
		reports = calloc(batch->nentries ? batch->nentries : 1, sizeof *reports);
		for (size_t i = 0; reports && i < batch->nentries; i++)
			if (batch->entries[i].report)
				reports[nreports++] = batch->entries[i].report;
		rc = reports ? srv_symbol_set_load(cfg->data_dir, app->id, reports, nreports, false,
						       &set)
			     : ST_HARD_ERROR;
	}
	/* The first refusal of a lone report decides the reply's status. */
	cm_err single_code = ERR_NONE;
	char single_message[256] = "";
	for (size_t i = 0; rc >= 0 && i < batch->nentries; i++) {
		ing_entry *e = &batch->entries[i];
		if (!e->report) {
			single_code = e->error.code;
			snprintf(single_message, sizeof single_message, "%s", e->error.message);
			if (reject(rejected, e->report_id, e->error.code, e->error.message) < 0)
				rc = ST_HARD_ERROR;
			continue;
		}
		ing_report *r = e->report;
		if (!r->user_id) {
			single_code = ERR_BAD_FIELD;
			snprintf(single_message, sizeof single_message,
				 "user_id: missing (set it in the report or send "
				 "X-Stallscope-User): sampling needs a user");
			if (reject(rejected, r->report_id, single_code, single_message) < 0)
				rc = ST_HARD_ERROR;
			continue;
		}
		/* The policy may have changed since it was cached: then nothing
		 * was stored, and the report is made again under the new one. */
		st_new_report row;
		st_ingest_outcome result = ST_INGEST_STALE;
		int64_t id = 0;
		for (int attempt = 1;; attempt++) {
			srv_stored_form form;
			if (srv_stored_form_make(set, r, &rules, memo, batch->arena, &form) != 0) {
				rc = ST_HARD_ERROR;
				break;
			}
			row = (st_new_report){
					.received_day = day, .received_at = at,
					.sampled = ing_sampled(app->bundle_id, r->user_id, day,
							       policy.sample_rate),
					.config_version = policy.version,
					.report_id = r->report_id, .user_id = r->user_id,
					.kind = ing_kind_name(r->kind),
					.source = r->source ? r->source : "native",
					.app_version = r->app_version, .build = r->build,
					.os = r->os, .os_version = r->os_version,
					.os_build = r->os_build, .device = r->device,
					.client_timestamp = r->timestamp,
					.duration_ms = r->duration_ms,
					.key1 = form.s.grouping.key1, .key2 = form.s.grouping.key2,
					.frames1 = form.frames1, .frames2 = form.frames2,
					.pending = form.pending, .waits = form.waits,
					.raw = form.raw, .symbolized = form.symbolized,
			};
			rc = srv_ingest_commit(app->id, &row, &result, &id);
			srv_stored_form_clear(&form);
			if (rc < 0 || result != ST_INGEST_STALE || attempt == POLICY_ATTEMPTS)
				break;
			st_app_config_clear(&policy);
			rc = srv_policy_refresh(app->id, &policy);
			if (rc >= 0 && srv_grouping_rules(policy.grouping_rules, batch->arena,
							  &rules) != 0)
				rc = ST_HARD_ERROR;
			if (rc < 0)
				break;
		}
		if (rc < 0)
			break;
		switch (result) {
		case ST_INGEST_STORED:
		case ST_INGEST_DUPLICATE:
			if (json_array_append_new(accepted, json_pack("{s:s,s:I}", "report_id",
								      r->report_id, "id",
								      (json_int_t)id)) < 0)
				rc = ST_HARD_ERROR;
			break;
		case ST_INGEST_STALE:
			/* The policy changed under every attempt: 503, and the
			 * client's retry is safe. */
			rc = ST_SOFT_ERROR;
			break;
		case ST_INGEST_NOT_SAMPLED:
		case ST_INGEST_QUOTA:
			single_code =
				result == ST_INGEST_QUOTA ? ERR_QUOTA_EXHAUSTED : ERR_NOT_SAMPLED;
			snprintf(single_message, sizeof single_message, "%s",
				 result == ST_INGEST_QUOTA
					 ? "this user's daily report quota is used up"
					 : "this user is not sampled today");
			if (reject(rejected, r->report_id, single_code, NULL) < 0)
				rc = ST_HARD_ERROR;
			break;
		}
	}
	if (rc < 0) {
		/* Reports committed before the failure stay; the client's retry
		 * finds them by report_id. */
		ret = srv_reply_store_error(conn, rc);
	} else if (!batch->is_batch && json_array_size(rejected) == 1) {
		ret = srv_reply_error(conn, single_code, "%s", single_message);
	} else {
		json_t *reply = json_pack("{s:O,s:O}", "accepted", accepted, "rejected", rejected);
		ret = srv_reply_json(conn, 202, reply);
	}
	json_decref(accepted);
	json_decref(rejected);
	ing_memo_free(memo);
	srv_symbol_set_free(set);
	free(reports);
	st_app_config_clear(&policy);
	ing_batch_free(batch);
	return ret;
}
