/*
 * h_sampling_get.c — GET /api/v1/sampling?user_id=U&app_version=V
 * [&os_version=O&device=D] (ingest key): should this device upload today?
 * {"upload","reason","quota_remaining","day","sample_rate"} (SPEC §5).
 * Clients ask once a day; ingest enforces the same decision, so asking is
 * an optimization, never a loophole. With app_version the user also counts
 * as active on the day for that version, sampled or not (SPEC §10.2);
 * without it (older clients) nothing is counted. os_version and device,
 * when given, are the user's of the day: rates under those filters divide
 * by them (schema/045). The policy comes from memory, and the whitelist, the
 * quota used and the count from one batched statement shared with the
 * other calls in flight (server/service/activity_commit.h).
 */
#include <stdbool.h>
#include <string.h>

#include "ingest/report.h"
#include "ingest/sampling.h"
#include "server/service/activity_commit.h"
#include "server/service/clock.h"
#include "server/service/policy_cache.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

/* Answers CALL through the activity writer (whitelist, quota used, and
 * the user counted as active) under the app's policy, cached or, when the
 * database says it is stale, read again (ingest's rule): 0 with *CFG the
 * policy the answer was made under (caller clears it), or a negative
 * st_status. */
static int check_in(const st_app *app, st_checkin *call, st_app_config *cfg)
{
	int rc = srv_policy_get(app->id, cfg);
	for (int tries = 0; rc >= 0; tries++) {
		call->sampled =
			ing_sampled(app->bundle_id, call->user_id, call->day, cfg->sample_rate);
		rc = srv_activity_check_in(app->id, cfg->version, call);
		if (rc != 0)
			break;
		st_app_config_clear(cfg);
		/* Changed again at every read: give up rather than spin. */
		rc = tries < 3 ? srv_policy_refresh(app->id, cfg) : ST_SOFT_ERROR;
	}
	return rc < 0 ? rc : 0;
}

/* The optional query argument NAME, or NULL when absent; *OK false when
 * it is empty or longer than a stored dimension. */
static const char *optional_dimension(struct MHD_Connection *conn, const char *name, bool *ok)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
	*ok = !v || (v[0] && strlen(v) <= ING_DIMENSION_MAX);
	return v;
}

enum MHD_Result srv_h_sampling_get(struct MHD_Connection *conn, srv_request *req)
{
	const char *user = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "user_id");
	if (!user || !user[0] || strlen(user) > ING_DIMENSION_MAX)
		return srv_reply_error(conn, ERR_BAD_QUERY, "user_id: required, 1 to %d bytes",
				       ING_DIMENSION_MAX);
	bool version_ok, os_ok, device_ok;
	const char *version = optional_dimension(conn, "app_version", &version_ok);
	const char *os_version = optional_dimension(conn, "os_version", &os_ok);
	const char *device = optional_dimension(conn, "device", &device_ok);
	if (!version_ok || !os_ok || !device_ok)
		return srv_reply_error(conn, ERR_BAD_QUERY, "%s: optional, 1 to %d bytes",
				       !version_ok ? "app_version"
				       : !os_ok	   ? "os_version"
						   : "device",
				       ING_DIMENSION_MAX);
	time_t now = srv_now();
	char day[ING_DAY_LEN], at[32];
	ing_utc_day(now, day);
	srv_format_time(now, at, sizeof at);
	const st_app *app = srv_req_app(req);
	st_checkin call = {.day = day,
			   .at = at,
			   .app_version = version,
			   .user_id = user,
			   .os_version = os_version,
			   .device = device};
	st_app_config cfg = {0};
	int rc = check_in(app, &call, &cfg);
	if (rc < 0) {
		st_app_config_clear(&cfg);
		return srv_reply_store_error(conn, rc);
	}
	ing_sampling_input in = {
		.sampled = call.sampled,
		.whitelisted = call.listed,
		.now = now,
		.daily_quota =
			cfg.daily_quota > UINT32_MAX ? UINT32_MAX : (uint32_t)cfg.daily_quota,
		.used_today = call.used > UINT32_MAX ? UINT32_MAX : (uint32_t)call.used,
	};
	ing_sampling_decision d = ing_sampling_decide(&in);
	double rate = cfg.sample_rate;
	st_app_config_clear(&cfg);
	json_t *quota = d.quota_remaining < 0 ? json_null() : json_integer(d.quota_remaining);
	return srv_reply_json(conn, 200,
			      json_pack("{s:b,s:s,s:o,s:s,s:f}", "upload", d.upload, "reason",
					ing_sample_reason_name(d.reason), "quota_remaining", quota,
					"day", day, "sample_rate", rate));
}
