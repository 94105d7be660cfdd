/*
 * h_webhook_put.c — PUT /api/v1/apps/{app}/webhooks/{name} (admin token):
 * creates (201) or replaces (200) a webhook (SPEC §11.2) from
 * {"url","secret","events":["new_group","regressed","spike"],
 * "format":"json|slack"}; events default to all three, format to json.
 * Only http and https URLs; where they resolve is checked at each send
 * (docs/SECURITY.md). Answers the webhook without its secret, which no
 * reply or log line ever holds.
 */
#include <stdio.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/webhook_send.h"
#include "store/alerts.h"

#define MAX_SECRET 256
#define MAX_NAME   64

static const char *const event_types[] = {"new_group", "regressed", "spike"};

/* The name as a path segment and a log line can carry it. */
static bool good_name(const char *s)
{
	size_t n = strlen(s);
	return n >= 1 && n <= MAX_NAME &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* EVENTS (absent: all) as a text[] literal into OUT; NULL, or why not. */
static const char *parse_events(const json_t *events, char *out, size_t cap)
{
	bool want[3] = {events == NULL, events == NULL, events == NULL};
	if (events && (!json_is_array(events) || json_array_size(events) == 0))
		return "events: expected a non-empty array of new_group, regressed and spike";
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e)
	{
		size_t k = 0;
		while (k < 3 &&
		       !(json_is_string(e) && !strcmp(json_string_value(e), event_types[k])))
			k++;
		if (k == 3)
			return "events: expected new_group, regressed or spike";
		want[k] = true;
	}
	size_t n = (size_t)snprintf(out, cap, "{");
	for (size_t k = 0; k < 3; k++)
		if (want[k])
			n += (size_t)snprintf(out + n, cap - n, "%s%s", n > 1 ? "," : "",
					      event_types[k]);
	snprintf(out + n, cap - n, "}");
	return NULL;
}

/* BODY into W; NULL when fine, else the 400 message (maybe in WHY). */
static const char *parse_webhook(const json_t *body, st_webhook *w, char *events, size_t cap,
				 char *why, size_t whycap)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)body, key, v)
	{
		if (strcmp(key, "url") && strcmp(key, "secret") && strcmp(key, "events") &&
		    strcmp(key, "format")) {
			snprintf(why, whycap, "%.64s: unknown field", key);
			return why;
		}
	}
	w->url = json_string_value(json_object_get(body, "url"));
	w->secret = json_string_value(json_object_get(body, "secret"));
	json_t *format = json_object_get(body, "format");
	w->format = format ? json_string_value(format) : "json";
	if (!w->url)
		return "url: expected a string";
	char err[160];
	if (srv_webhook_url_check(w->url, err, sizeof err) < 0) {
		snprintf(why, whycap, "url: %s", err);
		return why;
	}
	if (!w->secret || json_string_length(json_object_get(body, "secret")) == 0 ||
	    json_string_length(json_object_get(body, "secret")) > MAX_SECRET ||
	    strlen(w->secret) != json_string_length(json_object_get(body, "secret")))
		return "secret: expected a string of 1 to 256 bytes";
	if (!w->format || (strcmp(w->format, "json") && strcmp(w->format, "slack")))
		return "format: expected json or slack";
	return parse_events(json_object_get(body, "events"), events, cap);
}

typedef struct put_tx {
	int64_t app_id;
	st_webhook w;
	int created;
} put_tx;

static int put_cb(st_conn *c, void *cls)
{
	put_tx *t = cls;
	int rc = st_webhook_put(c, t->app_id, &t->w);
	t->created = rc;
	return rc;
}

enum MHD_Result srv_h_webhook_put(struct MHD_Connection *conn, srv_request *req)
{
	const char *name = srv_req_param(req, 1);
	if (!good_name(name))
		return srv_reply_error(conn, ERR_BAD_FIELD,
				       "name: expected 1 to 64 letters, digits, '.', '_' or '-'");
	const json_t *body = srv_req_json(req);
	if (!json_is_object(body))
		return srv_reply_error(conn, ERR_BAD_FIELD, "body: expected an object");
	put_tx t = {.app_id = srv_req_app(req)->id};
	t.w.name = name;
	char events[64], why[300];
	const char *bad = parse_webhook(body, &t.w, events, sizeof events, why, sizeof why);
	if (bad)
		return srv_reply_error(conn, ERR_BAD_FIELD, "%s", bad);
	t.w.events = events;
	int rc = st_run_tx("webhook_put", put_cb, &t);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	json_t *events_json = json_array();
	for (size_t k = 0; k < 3; k++)
		if (strstr(events, event_types[k]))
			json_array_append_new(events_json, json_string(event_types[k]));
	return srv_reply_json(conn, t.created ? 201 : 200,
			      json_pack("{s:s, s:s, s:o, s:s}", "name", name, "url", t.w.url,
					"events", events_json, "format", t.w.format));
}
