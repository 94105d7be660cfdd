/*
 * backfill_check_ins.c — POST /api/v1/apps/{app}/backfill?received_at=T
 * &format=check_ins (admin token): GET /api/v1/sampling calls made on T's
 * day, as a batch. Active users are counted per day (SPEC §10.2) and the
 * device route can only count today, so history (an import from another
 * tool, `stallscope demo`'s week) comes through here, like backfilled
 * reports. Body {"check_ins":[{"user_id","app_version"[,"os_version","device"]}…]} (1 to
 * BACKFILL_CHECK_INS_MAX; os_version and device, when there, strings of
 * 1 to ING_DIMENSION_MAX bytes as the device route takes them, else 400
 * naming the member); the reply gives each call the answer a device
 * would have had on that day: {"check_ins":[{"user_id","upload",
 * "reason"}]}. Counted in one statement, sampling_check_ins, as the
 * device route's batches are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "ingest/report.h"
#include "ingest/sampling.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/clock.h"
#include "server/service/policy_cache.h"
#include "store/activity.h"

#define BACKFILL_CHECK_INS_MAX 10000

typedef struct check_in_batch {
	int64_t app_id, config_version;
	st_checkin *rows;
	st_checkin **row_ptrs;
	size_t n;
} check_in_batch;

static int store_cb(st_conn *c, void *cls)
{
	check_in_batch *b = cls;
	return st_sampling_check_ins(c, b->app_id, b->config_version, b->row_ptrs, b->n);
}

/* CALL's optional member NAME (check_ins[I]) into *OUT: NULL when absent,
 * else a string of 1 to ING_DIMENSION_MAX bytes, as the device route
 * takes it; false with ERR for anything else (null, "", a number). */
static bool optional_dimension(const json_t *call, size_t i, const char *name, const char **out,
			       char *err, size_t errcap)
{
	const json_t *v = json_object_get(call, name);
	*out = json_string_value(v);
	if (!v || (*out && (*out)[0] && strlen(*out) <= ING_DIMENSION_MAX))
		return true;
	snprintf(err, errcap, "check_ins[%zu].%s: optional, a string of 1 to %d bytes", i, name,
		 ING_DIMENSION_MAX);
	return false;
}

/* Reads the body's calls into B->rows (strings borrowed from BODY); else
 * false with the 400's message in ERR. */
static bool read_calls(const json_t *body, check_in_batch *b, char *err, size_t errcap)
{
	const json_t *list = json_object_get(body, "check_ins");
	size_t n = json_array_size(list);
	if (!json_is_array(list) || n == 0 || n > BACKFILL_CHECK_INS_MAX) {
		snprintf(err, errcap, "check_ins: an array of 1 to %d calls",
			 BACKFILL_CHECK_INS_MAX);
		return false;
	}
	b->rows = calloc(n, sizeof *b->rows);
	b->row_ptrs = calloc(n, sizeof *b->row_ptrs);
	if (!b->rows || !b->row_ptrs) {
		snprintf(err, errcap, "out of memory");
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *call = json_array_get(list, i);
		const char *user = json_string_value(json_object_get(call, "user_id"));
		const char *version = json_string_value(json_object_get(call, "app_version"));
		if (!user || !user[0] || strlen(user) > ING_DIMENSION_MAX || !version ||
		    !version[0] || strlen(version) > ING_DIMENSION_MAX) {
			snprintf(err, errcap,
				 "check_ins[%zu]: user_id and app_version required, 1 to %d "
				 "bytes each",
				 i, ING_DIMENSION_MAX);
			return false;
		}
		const char *os_version, *device;
		if (!optional_dimension(call, i, "os_version", &os_version, err, errcap) ||
		    !optional_dimension(call, i, "device", &device, err, errcap))
			return false;
		b->rows[i] = (st_checkin){.user_id = user,
					  .app_version = version,
					  .os_version = os_version,
					  .device = device};
		b->row_ptrs[i] = &b->rows[i];
	}
	b->n = n;
	return true;
}

/* Counts B's calls on DAY at AT under the app's policy (read again when
 * the database says the cached one is stale, as the device route does):
 * 0 with *CFG the policy they were answered under, or a negative
 * st_status. */
static int count_calls(const st_app *app, check_in_batch *b, const char *day, const char *at,
		       st_app_config *cfg)
{
	int rc = srv_policy_get(app->id, cfg);
	for (int tries = 0; rc >= 0; tries++) {
		for (size_t i = 0; i < b->n; i++) {
			b->rows[i].day = day;
			b->rows[i].at = at;
			b->rows[i].sampled = ing_sampled(app->bundle_id, b->rows[i].user_id, day,
							 cfg->sample_rate);
		}
		b->config_version = cfg->version;
		rc = st_run_autocommit("backfill_check_ins", store_cb, b);
		if (rc != 0)
			break;
		st_app_config_clear(cfg);
		rc = tries < 3 ? srv_policy_refresh(app->id, cfg) : ST_SOFT_ERROR;
	}
	return rc < 0 ? rc : 0;
}

static json_t *answers(const check_in_batch *b, const st_app_config *cfg, time_t received)
{
	json_t *list = json_array();
	for (size_t i = 0; list && i < b->n; i++) {
		const st_checkin *r = &b->rows[i];
		ing_sampling_input in = {
			.sampled = r->sampled,
			.whitelisted = r->listed,
			.now = received,
			.daily_quota = cfg->daily_quota > UINT32_MAX ? UINT32_MAX
								     : (uint32_t)cfg->daily_quota,
			.used_today = r->used > UINT32_MAX ? UINT32_MAX : (uint32_t)r->used,
		};
		ing_sampling_decision d = ing_sampling_decide(&in);
		json_array_append_new(list, json_pack("{s:s,s:b,s:s}", "user_id", r->user_id,
						      "upload", d.upload, "reason",
						      ing_sample_reason_name(d.reason)));
	}
	return json_pack("{s:o}", "check_ins", list);
}

enum MHD_Result srv_backfill_check_ins(struct MHD_Connection *conn, srv_request *req,
				       time_t received)
{
	size_t len = 0;
	const char *text = srv_req_body(req, &len);
	char err[160];
	json_t *body = text && len ? cm_json_parse(text, len, 4, err, sizeof err) : NULL;
	if (!body)
		return srv_reply_error(conn, text && len ? ERR_BAD_JSON : ERR_EMPTY_BODY, "%s",
				       text && len ? err : "request body is empty");
	check_in_batch b = {.app_id = srv_req_app(req)->id};
	enum MHD_Result sent;
	if (!read_calls(body, &b, err, sizeof err)) {
		sent = srv_reply_error(conn, ERR_BAD_FIELD, "%s", err);
	} else {
		char day[ING_DAY_LEN], at[32];
		ing_utc_day(received, day);
		srv_format_time(received, at, sizeof at);
		st_app_config cfg = {0};
		int rc = count_calls(srv_req_app(req), &b, day, at, &cfg);
		sent = rc < 0 ? srv_reply_store_error(conn, rc)
			      : srv_reply_json(conn, 200, answers(&b, &cfg, received));
		st_app_config_clear(&cfg);
	}
	free(b.rows);
	free(b.row_ptrs);
	json_decref(body);
	return sent;
}
