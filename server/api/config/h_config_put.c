/*
 * h_config_put.c — PUT /api/v1/apps/{app}/config (admin token): changes
 * the fields given — any of sample_rate (0…1), daily_quota (≥ 0),
 * retention_days (1…3650) and grouping_rules ({"skip_images":[…],
 * "skip_prefixes":[…]}) — and answers the whole policy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/config/policy_json.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

#define MAX_RULES    100
#define MAX_RULE_LEN 4096

typedef struct config_write {
	int64_t app_id;
	st_config_update u;
	st_app_config cfg;
} config_write;

static int write_cb(st_conn *c, void *cls)
{
	config_write *t = cls;
	int rc = st_config_update_apply(c, t->app_id, &t->u);
	st_app_config_clear(&t->cfg);
	if (rc >= 0)
		rc = st_config_get(c, t->app_id, &t->cfg);
	return rc;
}

/* A list of 0…MAX_RULES non-empty strings; NULL when fine, else why. */
static const char *check_strings(const json_t *v)
{
	if (!json_is_array(v))
		return "expected an array of strings";
	if (json_array_size(v) > MAX_RULES)
		return "more than 100 entries";
	size_t i;
	json_t *s;
	json_array_foreach(v, i, s) if (!json_is_string(s) || json_string_length(s) == 0 ||
					json_string_length(s) >
						MAX_RULE_LEN) return "expected non-empty strings "
								     "of at most 4096 bytes";
	return NULL;
}

/* Reads BODY into U; NULL when fine, else the 400 message (in WHY). */
static const char *parse_update(const json_t *body, st_config_update *u, char **rules_text,
				char *why, size_t cap)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v)
	{
		if (!strcmp(key, "sample_rate")) {
			double r = json_number_value(v);
			if (!json_is_number(v) || !(r >= 0 && r <= 1))
				return "sample_rate: expected a number from 0 to 1";
			u->has_sample_rate = true;
			u->sample_rate = r;
		} else if (!strcmp(key, "daily_quota")) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 1000000)
				return "daily_quota: expected an integer from 0 to 1000000";
			u->has_daily_quota = true;
			u->daily_quota = json_integer_value(v);
		} else if (!strcmp(key, "retention_days")) {
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > 3650)
				return "retention_days: expected an integer from 1 to 3650";
			u->has_retention_days = true;
			u->retention_days = json_integer_value(v);
		} else if (!strcmp(key, "grouping_rules")) {
			if (!json_is_object(v))
				return "grouping_rules: expected an object";
			const char *rk;
			json_t *rv;
			json_object_foreach(v, rk, rv)
			{
				const char *bad =
					strcmp(rk, "skip_images") && strcmp(rk, "skip_prefixes")
						? "unknown field"
						: check_strings(rv);
				if (bad) {
					snprintf(why, cap, "grouping_rules.%.64s: %s", rk, bad);
					return why;
				}
			}
			/* Both lists are always stored, so readers need not guess. */
			json_t *imgs = json_object_get(v, "skip_images");
			json_t *pre = json_object_get(v, "skip_prefixes");
			json_t *norm = json_pack(
				"{s:o,s:o}", "skip_images", imgs ? json_incref(imgs) : json_array(),
				"skip_prefixes", pre ? json_incref(pre) : json_array());
			free(*rules_text);
			*rules_text = norm ? json_dumps(norm, JSON_COMPACT) : NULL;
			json_decref(norm);
			if (!*rules_text)
				return "grouping_rules: out of memory";
			u->has_grouping_rules = true;
			u->grouping_rules = *rules_text;
		} else {
			snprintf(why, cap, "%.64s: unknown field", key);
			return why;
		}
	}
	return NULL;
}

enum MHD_Result srv_h_config_put(struct MHD_Connection *conn, srv_request *req)
{
	const json_t *body = srv_req_json(req);
	if (!json_is_object(body))
		return srv_reply_error(conn, ERR_BAD_FIELD, "body: expected an object");
	config_write t = {.app_id = srv_req_app(req)->id};
	char *rules_text = NULL;
	char why[160];
	const char *bad = parse_update(body, &t.u, &rules_text, why, sizeof why);
	enum MHD_Result ret;
	if (bad) {
		ret = srv_reply_error(conn, ERR_BAD_FIELD, "%s", bad);
	} else {
		int rc = st_run_tx("config_put", write_cb, &t);
		ret = rc < 0 ? srv_reply_store_error(conn, rc)
			     : srv_reply_json(conn, 200, srv_config_json(&t.cfg));
	}
	st_app_config_clear(&t.cfg);
	free(rules_text);
	return ret;
}
