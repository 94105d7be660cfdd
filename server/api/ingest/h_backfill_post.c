/*
 * h_backfill_post.c — POST /api/v1/apps/{app}/backfill?received_at=T
 * [&format=native|metrickit|kscrash|ips|matrix|check_ins] (admin token): reports
 * as the ingest routes take them, stored as if received at T, or sampling
 * check-ins made at T (server/api/ingest/backfill_check_ins.c). The day a
 * report belongs to is the day it was received (SPEC §4.1), so importing
 * history (`stallscope demo`, a migration from another tool) needs to say
 * when; devices cannot: the ingest key is not accepted here, and the
 * device routes take no received_at. Sampling, quota and the whitelist
 * apply on T's day as they would have then.
 *
 * T is "YYYY-MM-DDTHH:MM:SSZ", not in the future and not before the
 * oldest day the app's retention keeps (its partition would be purged at
 * once); anything else is 400 bad_query.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ingest/parse.h"
#include "server/service/clock.h"
#include "server/api/handlers.h"
#include "server/api/ingest/ingest.h"
#include "server/service/policy_cache.h"
#include "server/http/reply.h"

#define DAY_SECONDS 86400

/* TEXT as "YYYY-MM-DDTHH:MM:SSZ" (calendar-checked) into *OUT. */
static bool parse_utc(const char *text, time_t *out)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
	if (strlen(text) != sizeof shape - 1)
		return false;
	for (size_t i = 0; shape[i]; i++)
		if (shape[i] == 'd' ? text[i] < '0' || text[i] > '9' : text[i] != shape[i])
			return false;
	struct tm tm, back;
	memset(&tm, 0, sizeof tm);
	sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
	       &tm.tm_min, &tm.tm_sec);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	struct tm want = tm;
	time_t t = timegm(&tm);
	/* timegm normalizes 02-30 into March: a round trip tells. */
	if (!gmtime_r(&t, &back) || back.tm_year != want.tm_year || back.tm_mon != want.tm_mon ||
	    back.tm_mday != want.tm_mday || back.tm_hour != want.tm_hour ||
	    back.tm_min != want.tm_min || back.tm_sec != want.tm_sec)
		return false;
	*out = t;
	return true;
}

static bool parse_format(const char *name, ing_format *out)
{
	static const struct {
		const char *name;
		ing_format format;
	} formats[] = {
		{"native", ING_FORMAT_NATIVE},	 {"metrickit", ING_FORMAT_METRICKIT},
		{"kscrash", ING_FORMAT_KSCRASH}, {"ips", ING_FORMAT_IPS},
		{"matrix", ING_FORMAT_MATRIX},
	};
	for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
		if (!strcmp(name, formats[i].name)) {
			*out = formats[i].format;
			return true;
		}
	return false;
}

enum MHD_Result srv_h_backfill_post(struct MHD_Connection *conn, srv_request *req)
{
	const char *at = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "received_at");
	const char *fmt = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "format");
	ing_format format = ING_FORMAT_NATIVE;
	bool check_ins = fmt && !strcmp(fmt, "check_ins");
	if (fmt && !check_ins && !parse_format(fmt, &format))
		return srv_reply_error(
			conn, ERR_BAD_QUERY,
			"format: native, metrickit, kscrash, ips, matrix or check_ins");
	time_t received;
	if (!at || !parse_utc(at, &received))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "received_at: required, YYYY-MM-DDTHH:MM:SSZ (UTC)");
	time_t now = srv_now();
	if (received > now)
		return srv_reply_error(conn, ERR_BAD_QUERY, "received_at: in the future");
	st_app_config policy;
	int rc = srv_policy_get(srv_req_app(req)->id, &policy);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	int64_t days = policy.retention_days > 0 ? policy.retention_days : 1;
	st_app_config_clear(&policy);
	/* Retention keeps today and the RETENTION - 1 days before it. */
	time_t oldest = now - now % DAY_SECONDS - (time_t)(days - 1) * DAY_SECONDS;
	if (received < oldest)
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "received_at: before the oldest day the app's "
				       "retention keeps (%lld days)",
				       (long long)days);
	if (check_ins)
		return srv_backfill_check_ins(conn, req, received);
	return srv_ingest_handle_at(conn, req, format, received);
}
