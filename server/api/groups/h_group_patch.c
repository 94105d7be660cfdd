/*
 * h_group_patch.c — PATCH /api/v1/apps/{app}/groups/{key1} (admin token):
 * sets a level-1 group's status (SPEC §11.1) — {"status":"open"},
 * {"status":"resolved","resolved_in":"2.3"} (resolved_in optional),
 * {"status":"ignored","until":"2026-12-01T00:00:00Z"} or
 * {"status":"ignored","until_reports":100} (both optional) — and answers
 * the status as GET shows it. 404 when the app has no such group.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/delta_folder.h"
#include "store/lifecycle.h"

#define MAX_VERSION	  64
#define MAX_UNTIL_REPORTS 1000000000

typedef struct patch_tx {
	int64_t app_id;
	const char *key;
	st_status_change change;
	char *json;
} patch_tx;

static int patch_cb(st_conn *c, void *cls)
{
	patch_tx *t = cls;
	int rc = st_group_status_set(c, t->app_id, t->key, &t->change);
	if (rc <= 0)
		return rc;
	free(t->json);
	return st_group_status_json(c, t->app_id, t->key, &t->json);
}

static int two_digits(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* Whether the fields of "YYYY-MM-DDTHH:MM:SS" name a real instant:
 * PostgreSQL refuses 2026-02-30, and a refusal there would be a 500. */
static bool real_time(const char *s)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int year = two_digits(s) * 100 + two_digits(s + 2), month = two_digits(s + 5);
	int day = two_digits(s + 8);
	if (year < 1 || month < 1 || month > 12 || day < 1)
		return false;
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	return day <= days[month - 1] + (month == 2 && leap) && two_digits(s + 11) < 24 &&
	       two_digits(s + 14) < 60 && two_digits(s + 17) < 60;
}

/* "YYYY-MM-DDTHH:MM:SS" with optional fraction, then Z or ±HH:MM: what
 * PostgreSQL reads as one instant, nothing it would guess at. */
static bool is_rfc3339(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";
	size_t i = 0;
	for (; shape[i]; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	if (!real_time(s))
		return false;
	if (s[i] == '.')
		for (i++; s[i] >= '0' && s[i] <= '9'; i++)
			;
	if (!strcmp(s + i, "Z"))
		return true;
	return (s[i] == '+' || s[i] == '-') && strlen(s + i) == 6 && s[i + 3] == ':' &&
	       strspn(s + i + 1, "0123456789") == 2 && strspn(s + i + 4, "0123456789") == 2 &&
	       two_digits(s + i + 1) < 24 && two_digits(s + i + 4) < 60;
}

/* The status-specific fields of BODY into C; NULL when fine, else why. */
static const char *parse_field(const char *key, json_t *v, st_status_change *c, char *num,
			       size_t cap)
{
	if (!strcmp(key, "resolved_in")) {
		if (strcmp(c->status, "resolved"))
			return "resolved_in: only with status resolved";
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > MAX_VERSION ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return "resolved_in: expected a version of 1 to 64 bytes";
		c->resolved_in = json_string_value(v);
	} else if (!strcmp(key, "until")) {
		if (strcmp(c->status, "ignored"))
			return "until: only with status ignored";
		if (!json_is_string(v) || !is_rfc3339(json_string_value(v)))
			return "until: expected an RFC 3339 time such as 2026-12-01T00:00:00Z";
		c->until = json_string_value(v);
	} else if (!strcmp(key, "until_reports")) {
		if (strcmp(c->status, "ignored"))
			return "until_reports: only with status ignored";
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > MAX_UNTIL_REPORTS)
			return "until_reports: expected an integer from 1 to 1000000000";
		snprintf(num, cap, "%lld", (long long)json_integer_value(v));
		c->until_reports = num;
	} else if (strcmp(key, "status")) {
		return "unknown field";
	}
	return NULL;
}

enum MHD_Result srv_h_group_patch(struct MHD_Connection *conn, srv_request *req)
{
	const json_t *body = srv_req_json(req);
	if (!json_is_object(body))
		return srv_reply_error(conn, ERR_BAD_FIELD, "body: expected an object");
	patch_tx t = {.app_id = srv_req_app(req)->id, .key = srv_req_param(req, 1)};
	const char *status = json_string_value(json_object_get(body, "status"));
	if (!status ||
	    (strcmp(status, "open") && strcmp(status, "resolved") && strcmp(status, "ignored")))
		return srv_reply_error(conn, ERR_BAD_FIELD,
				       "status: expected open, resolved or ignored");
	t.change.status = status;
	char num[24];
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v)
	{
		const char *bad = parse_field(key, v, &t.change, num, sizeof num);
		if (bad)
			return srv_reply_error(conn, ERR_BAD_FIELD, "%.64s: %s", key, bad);
	}
	/* Reports counted before the change do not count towards an ignore's
	 * until_reports: the app's waiting deltas are folded first. */
	int rc = srv_deltas_fold_then_read(t.app_id, "group_patch", patch_cb, &t);
	/* A commit that failed after the read leaves T.json to free too. */
	return srv_reply_read(conn, rc, t.json, "group", t.key);
}
