/* alert_delivery.c — see alert_delivery.h. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "server/service/alert_delivery.h"
#include "server/service/background.h"
#include "server/service/metrics.h"

/* Claimed at a time: one, so its lease (SRV_ALERT_LEASE_S, longer than a
 * send's timeout) covers its send alone, never a wait behind another. */
#define CLAIM 1

static srv_background bg = SRV_BACKGROUND_INIT;

long srv_alert_retry_after(int attempt, int64_t age_s, unsigned retry_s)
{
	if (age_s >= SRV_ALERT_GIVE_UP_S)
		return -1;
	long wait = (long)retry_s;
	for (int i = 1; i < attempt && wait < SRV_ALERT_GIVE_UP_S; i++)
		wait *= 2;
	long left = (long)(SRV_ALERT_GIVE_UP_S - age_s);
	return wait < left ? wait : left;
}

/* The dashboard's address without a trailing slash. */
static void public_url(const srv_config *cfg, char *out, size_t cap)
{
	if (cfg->public_url[0])
		snprintf(out, cap, "%s", cfg->public_url);
	else if (strchr(cfg->listen_host, ':'))
		snprintf(out, cap, "http://[%s]:%u", cfg->listen_host, cfg->listen_port);
	else
		snprintf(out, cap, "http://%s:%u", cfg->listen_host, cfg->listen_port);
	size_t n = strlen(out);
	while (n > 0 && out[n - 1] == '/')
		out[--n] = '\0';
}

/* Slack's mrkdwn gives &, < and > meaning: they are escaped. */
static void slack_put(cm_buf *b, const char *s)
{
	for (; s && *s; s++) {
		const char *esc = *s == '&'   ? "&amp;"
				  : *s == '<' ? "&lt;"
				  : *s == '>' ? "&gt;"
					      : NULL;
		if (esc)
			cm_buf_put(b, esc, strlen(esc));
		else
			cm_buf_put(b, s, 1);
	}
}

static const char *headline(const char *type)
{
	if (!strcmp(type, "new_group"))
		return "New stall group";
	if (!strcmp(type, "regressed"))
		return "Stall group regressed";
	if (!strcmp(type, "spike"))
		return "Stall spike";
	return "Test alert";
}

static void slack_counts(cm_buf *b, json_t *group, json_t *event)
{
	char line[256];
	json_t *rate = json_object_get(group, "rate");
	int n = snprintf(line, sizeof line, "%lld reports · %lld users",
			 (long long)json_integer_value(json_object_get(group, "reports")),
			 (long long)json_integer_value(json_object_get(group, "users")));
	if (json_is_number(rate))
		n += snprintf(line + n, sizeof line - (size_t)n, " · %.2f%% of sampled users",
			      100.0 * json_number_value(rate));
	json_t *day_reports = json_object_get(event, "reports");
	if (json_is_integer(day_reports))
		snprintf(line + n, sizeof line - (size_t)n, " · %lld on %s",
			 (long long)json_integer_value(day_reports),
			 json_string_value(json_object_get(event, "day")));
	slack_put(b, line);
	const char *version = json_string_value(json_object_get(event, "version"));
	if (version) {
		slack_put(b, " · version ");
		slack_put(b, version);
	}
	cm_buf_put(b, "\n", 1);
}

/* "*Headline* in APP: culprit", the top frames, the counts, the link. */
static char *slack_text(const st_delivery *d, json_t *group, json_t *event, const char *link)
{
	cm_buf b = {0};
	cm_buf_put(&b, "*", 1);
	slack_put(&b, headline(d->type));
	cm_buf_put(&b, "* in ", 5);
	slack_put(&b, d->app);
	json_t *culprit = json_object_get(group, "culprit");
	const char *function = json_string_value(json_object_get(culprit, "function"));
	const char *frame = json_string_value(json_object_get(culprit, "frame"));
	if (function || frame) {
		cm_buf_put(&b, ": ", 2);
		slack_put(&b, function ? function : frame);
	}
	cm_buf_put(&b, "\n", 1);
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(group, "top_frames"), i, f)
	{
		cm_buf_put(&b, "`", 1);
		slack_put(&b, json_string_value(f));
		cm_buf_put(&b, "`\n", 2);
	}
	slack_counts(&b, group, event);
	cm_buf_put(&b, "<", 1);
	slack_put(&b, link);
	cm_buf_put(&b, "|Open the group in stallscope>", 30);
	cm_buf_put(&b, "", 1);
	if (b.failed) {
		free(b.data);
		return NULL;
	}
	return b.data;
}

char *srv_alert_body(const st_delivery *d, const srv_config *cfg, size_t *out_len)
{
	json_t *group = d->group ? json_loads(d->group, 0, NULL) : json_null();
	json_t *event = json_loads(d->event ? d->event : "{}", 0, NULL);
	char base[1100], link[1400];
	public_url(cfg, base, sizeof base);
	const char *key = json_string_value(json_object_get(group, "key"));
	snprintf(link, sizeof link, "%s/#/groups/%s", base, key ? key : "");
	json_t *body = NULL;
	if (group && event && !strcmp(d->format, "slack")) {
		char *text = slack_text(d, group, event, link);
		body = text ? json_pack("{s:s}", "text", text) : NULL;
		free(text);
	} else if (group && event) {
		if (json_is_object(group))
			json_object_set_new(group, "url", json_string(link));
		body = json_pack("{s:s, s:s, s:s, s:s, s:O, s:O}", "event_id", d->event_id, "type",
				 d->type, "app", d->app, "at", d->at, "group", group, "event",
				 event);
	}
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	json_decref(group);
	json_decref(event);
	if (text)
		*out_len = strlen(text);
	return text;
}

/* An owned copy of a claimed delivery: the claim's rows die with it. */
typedef struct claimed {
	st_delivery d;
	char *strings[11];
} claimed;

typedef struct claim_tx {
	claimed items[CLAIM];
	size_t n;
} claim_tx;

static void claimed_clear(claimed *c)
{
	for (size_t i = 0; i < sizeof c->strings / sizeof c->strings[0]; i++)
		free(c->strings[i]);
	memset(c, 0, sizeof *c);
}

static int copy_delivery(void *cls, const st_delivery *d)
{
	claim_tx *t = cls;
	if (t->n == CLAIM)
		return 0;
	claimed *c = &t->items[t->n++];
	c->d = *d;
	const char **fields[] = {&c->d.webhook,	 &c->d.url,  &c->d.secret, &c->d.format,
				 &c->d.event_id, &c->d.type, &c->d.at,	   &c->d.app,
				 &c->d.group,	 &c->d.event};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		if (!*fields[i])
			continue;
		if (!(c->strings[i] = strdup(*fields[i])))
			return -1;
		*fields[i] = c->strings[i];
	}
	return 0;
}

static int claim_cb(st_conn *c, void *cls)
{
	/* A retried attempt starts over: what the rolled-back one copied
	 * holds no lease. */
	claim_tx *t = cls;
	for (size_t i = 0; i < t->n; i++)
		claimed_clear(&t->items[i]);
	t->n = 0;
	return st_outbox_claim(c, CLAIM, SRV_ALERT_LEASE_S, copy_delivery, t);
}

static int fold_due_cb(st_conn *c, void *cls)
{
	(void)cls;
	int64_t folded = st_outbox_fold_due(c);
	return folded < 0 ? (int)folded : 0;
}

typedef struct done_tx {
	const st_delivery *d;
	st_delivery_result result;
	long status, retry_s;
	const char *error;
} done_tx;

static int done_cb(st_conn *c, void *cls)
{
	done_tx *t = cls;
	return st_outbox_done(c, t->d, t->result, t->status, t->error, (int)t->retry_s);
}

static void deliver(const srv_config *cfg, const st_delivery *d)
{
	srv_webhook_result res = {0};
	size_t len = 0;
	char *body = srv_alert_body(d, cfg, &len);
	if (body) {
		srv_webhook_request req = {
			.url = d->url,
			.secret = d->secret,
			.event_id = d->event_id,
			.event_type = d->type,
			.body = body,
			.body_len = len,
			.allow_private = cfg->webhook_allow_private != 0,
			.timeout_ms = SRV_ALERT_TIMEOUT_MS,
		};
		srv_webhook_send(&req, &res);
	} else {
		snprintf(res.error, sizeof res.error, "the alert's body could not be made");
	}
	free(body);
	done_tx t = {.d = d, .status = res.status, .error = res.delivered ? NULL : res.error};
	t.retry_s =
		res.delivered ? 0 : srv_alert_retry_after(d->attempt, d->age_s, cfg->webhook_retry);
	t.result = res.delivered ? ST_DELIVERED : t.retry_s < 0 ? ST_GAVE_UP : ST_FAILED;
	srv_metrics_webhook_delivery(t.result);
	if (!res.delivered)
		cm_log(CM_WARN, "webhook %s: event %s attempt %d: %s", d->webhook, d->event_id,
		       d->attempt, res.error);
	if (st_run_tx("outbox_done", done_cb, &t) < 0)
		cm_log(CM_WARN,
		       "webhook %s: event %s: the attempt could not be recorded; its "
		       "lease runs out and it is sent again",
		       d->webhook, d->event_id);
}

/* Claims and sends until nothing is due; sleeps a second then. */
static int pass(void *cls)
{
	const srv_config *cfg = cls;
	for (;;) {
		claim_tx t = {.n = 0};
		int rc = st_run_tx("outbox_fold_due", fold_due_cb, NULL);
		if (rc >= 0)
			rc = st_run_tx("outbox_claim", claim_cb, &t);
		for (size_t i = 0; rc >= 0 && i < t.n; i++)
			deliver(cfg, &t.items[i].d);
		for (size_t i = 0; i < t.n; i++)
			claimed_clear(&t.items[i]);
		if (rc < 0)
			return 10;
		if (t.n < CLAIM || srv_background_stopping(&bg))
			return 1;
	}
}

int srv_alert_delivery_start(const srv_config *cfg)
{
	return srv_background_start(&bg, pass, (void *)cfg);
}

void srv_alert_delivery_stop(void)
{
	srv_background_stop(&bg);
}

typedef struct target_tx {
	int64_t app_id;
	const char *name;
	st_webhook_target t;
} target_tx;

static int target_cb(st_conn *c, void *cls)
{
	target_tx *t = cls;
	return st_webhook_target_get(c, t->app_id, t->name, &t->t);
}

typedef struct log_tx {
	int64_t app_id;
	const char *name, *event_id;
	const srv_webhook_result *res;
} log_tx;

static int log_cb(st_conn *c, void *cls)
{
	log_tx *t = cls;
	return st_webhook_log_test(c, t->app_id, t->name, t->event_id, t->res->delivered,
				   t->res->status, t->res->delivered ? NULL : t->res->error);
}

int srv_alert_test_send(const srv_config *cfg, int64_t app_id, const char *name,
			srv_webhook_result *out)
{
	target_tx t = {.app_id = app_id, .name = name};
	int rc = st_run_tx("webhook_target", target_cb, &t);
	if (rc <= 0)
		return rc;
	st_delivery d = {
		.app_id = app_id,
		.attempt = 1,
		.webhook = name,
		.url = t.t.url,
		.secret = t.t.secret,
		.format = t.t.format,
		.event_id = t.t.event_id,
		.type = "test",
		.at = t.t.now,
		.app = t.t.app,
		.group = NULL,
		.event = "{}",
	};
	size_t len = 0;
	char *body = srv_alert_body(&d, cfg, &len);
	memset(out, 0, sizeof *out);
	if (body) {
		srv_webhook_request req = {
			.url = d.url,
			.secret = d.secret,
			.event_id = d.event_id,
			.event_type = "test",
			.body = body,
			.body_len = len,
			.allow_private = cfg->webhook_allow_private != 0,
			.timeout_ms = SRV_ALERT_TIMEOUT_MS,
		};
		srv_webhook_send(&req, out);
	} else {
		snprintf(out->error, sizeof out->error, "the alert's body could not be made");
	}
	free(body);
	log_tx l = {app_id, name, d.event_id, out};
	rc = st_run_tx("webhook_test_log", log_cb, &l);
	st_webhook_target_clear(&t.t);
	return rc < 0 ? rc : 1;
}
