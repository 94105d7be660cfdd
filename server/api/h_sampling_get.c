/*
 * h_sampling_get.c — GET /api/v1/sampling?user_id=U&app_version=V
 * [&os_version=O] (ingest key): should this device upload today?
 * {"upload","reason","quota_remaining","day","sample_rate"} (SPEC §5).
 * Clients ask once a day; ingest enforces the same decision, so asking is
 * an optimization, never a loophole. With app_version the user also counts
 * as active on the day for that version, sampled or not (SPEC §10.2,
 * through the activity writer); without it (older clients) nothing is
 * counted. os_version is accepted and checked, not kept.
 */
#include <stdbool.h>
#include <string.h>

#include "ingest/report.h"
#include "ingest/sampling.h"
#include "server/service/activity_commit.h"
#include "server/service/clock.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

typedef struct sampling_tx {
	int64_t app_id;
	const char *user, *day, *at;
	st_app_config cfg;
	int listed;
	int64_t used;
} sampling_tx;

static int sampling_cb(st_conn *c, void *cls)
{
	sampling_tx *t = cls;
	st_app_config_clear(&t->cfg);
	int rc = st_config_get(c, t->app_id, &t->cfg);
	if (rc >= 0)
		rc = t->listed = st_whitelist_active(c, t->app_id, t->user, t->at);
	if (rc >= 0)
		rc = st_quota_used(c, t->app_id, t->day, t->user, &t->used);
	return rc;
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
	bool version_ok, os_ok;
	const char *version = optional_dimension(conn, "app_version", &version_ok);
	(void)optional_dimension(conn, "os_version", &os_ok);
	if (!version_ok || !os_ok)
		return srv_reply_error(conn, ERR_BAD_QUERY, "%s: optional, 1 to %d bytes",
				       version_ok ? "os_version" : "app_version",
				       ING_DIMENSION_MAX);
	time_t now = srv_now();
	char day[ING_DAY_LEN], at[32];
	ing_utc_day(now, day);
	srv_format_time(now, at, sizeof at);
	const st_app *app = srv_req_app(req);
	sampling_tx t = {.app_id = app->id, .user = user, .day = day, .at = at};
	int rc = st_run_tx("sampling", sampling_cb, &t);
	if (rc < 0) {
		st_app_config_clear(&t.cfg);
		return srv_reply_store_error(conn, rc);
	}
	ing_sampling_input in = {
		.sampled = ing_sampled(app->bundle_id, user, day, t.cfg.sample_rate),
		.whitelisted = t.listed > 0,
		.now = now,
		.daily_quota = t.cfg.daily_quota > UINT32_MAX ? UINT32_MAX
							       : (uint32_t)t.cfg.daily_quota,
		.used_today = t.used > UINT32_MAX ? UINT32_MAX : (uint32_t)t.used,
	};
	if (version) {
		st_checkin seen = {day, version, user, in.sampled, in.whitelisted};
		if ((rc = srv_activity_count(app->id, &seen)) < 0) {
			st_app_config_clear(&t.cfg);
			return srv_reply_store_error(conn, rc);
		}
	}
	ing_sampling_decision d = ing_sampling_decide(&in);
	double rate = t.cfg.sample_rate;
	st_app_config_clear(&t.cfg);
	json_t *quota = d.quota_remaining < 0 ? json_null() : json_integer(d.quota_remaining);
	return srv_reply_json(conn, 200,
			      json_pack("{s:b,s:s,s:o,s:s,s:f}", "upload", d.upload, "reason",
					ing_sample_reason_name(d.reason), "quota_remaining",
					quota, "day", day, "sample_rate", rate));
}
