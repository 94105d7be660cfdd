/* alerts.c — see alerts.h. */
#include <stdlib.h>
#include <string.h>

#include "store/alerts.h"
#include "store/internal.h"

#define TS(x) ST_TS(x)

int st_webhook_put(st_conn *c, int64_t app_id, const st_webhook *w)
{
	/* xmax is 0 in a row this statement inserted, not in one it updated. */
	static const st_stmt q = {
		"webhook_put",
		"INSERT INTO webhooks AS h (app_id, name, url, secret, events, format)"
		" VALUES ($1, $2, $3, $4, $5::text[], $6)"
		" ON CONFLICT (app_id, name) DO UPDATE SET url = excluded.url,"
		" secret = excluded.secret, events = excluded.events, format = excluded.format,"
		" updated_at = now() RETURNING h.xmax = 0",
		6};
	bool created = false;
	int rc = ST_EXEC(c, &q, st_read_bool, &created, ST_INT64(app_id), ST_TEXT(w->name),
			 ST_TEXT(w->url), ST_TEXT(w->secret), ST_TEXT(w->events),
			 ST_TEXT(w->format));
	return rc < 0 ? rc : created;
}

int st_webhooks_json(st_conn *c, int64_t app_id, char **out_json)
{
	static const st_stmt q = {
		"webhooks_json",
		"SELECT json_build_object('webhooks', coalesce(json_agg(json_build_object("
		"'name', w.name, 'url', w.url, 'events', w.events, 'format', w.format,"
		" 'created_at', " TS("w.created_at") ", 'updated_at', " TS(
			"w.updated_at") ")"
					" ORDER BY w.name), '[]'))::text FROM webhooks w WHERE "
					"w.app_id = $1",
		1};
	st_param p[] = {ST_INT64(app_id)};
	return st_run_text(c, &q, p, 1, out_json);
}

int st_webhook_delete(st_conn *c, int64_t app_id, const char *name)
{
	static const st_stmt q = {"webhook_delete",
				  "DELETE FROM webhooks WHERE app_id = $1 AND name = $2", 2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(name));
}

int st_webhook_deliveries_json(st_conn *c, int64_t app_id, const char *name, char **out_json)
{
	static const st_stmt q = {
		"webhook_deliveries_json",
		"SELECT json_build_object('deliveries', (SELECT coalesce(json_agg("
		"json_build_object('at', " TS(
			"d.at") ", 'event_id', d.event_id, 'type', d.type,"
				" 'attempt', d.attempt, 'result', d.result, 'status', d.status, "
				"'error', d.error)"
				" ORDER BY d.id DESC), '[]') FROM (SELECT * FROM webhook_deliveries"
				" WHERE app_id = $1 AND webhook = $2 ORDER BY id DESC LIMIT 100) "
				"d))::text"
				" FROM webhooks w WHERE w.app_id = $1 AND w.name = $2",
		2};
	st_param p[] = {ST_INT64(app_id), ST_TEXT(name)};
	return st_run_text(c, &q, p, 2, out_json);
}

static int read_target(void *cls, const st_row *row)
{
	st_webhook_target *t = cls;
	char **fields[] = {&t->url, &t->secret, &t->format, &t->app, &t->event_id, &t->now};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const char *v = st_row_text(row, (int)i);
		if (!v || !(*fields[i] = strdup(v)))
			return -1;
	}
	return 0;
}

int st_webhook_target_get(st_conn *c, int64_t app_id, const char *name, st_webhook_target *out)
{
	static const st_stmt q = {
		"webhook_target",
		"SELECT w.url, w.secret, w.format, a.bundle_id, gen_random_uuid()::text,"
		" " TS("now()") " FROM webhooks w JOIN apps a ON a.id = w.app_id"
				" WHERE w.app_id = $1 AND w.name = $2",
		2};
	st_webhook_target_clear(out); /* what an attempt st_run_tx retries left */
	int rc = ST_EXEC(c, &q, read_target, out, ST_INT64(app_id), ST_TEXT(name));
	if (rc <= 0)
		st_webhook_target_clear(out);
	return rc;
}

void st_webhook_target_clear(st_webhook_target *t)
{
	free(t->url);
	free(t->secret);
	free(t->format);
	free(t->app);
	free(t->event_id);
	free(t->now);
	memset(t, 0, sizeof *t);
}

struct claim_each {
	st_delivery_cb cb;
	void *cls;
};

static int read_delivery(void *cls, const st_row *row)
{
	struct claim_each *e = cls;
	st_delivery d = {
		.id = st_row_int64(row, 0),
		.app_id = st_row_int64(row, 1),
		.attempt = (int)st_row_int64(row, 2),
		.age_s = st_row_int64(row, 3),
		.webhook = st_row_text(row, 4),
		.url = st_row_text(row, 5),
		.secret = st_row_text(row, 6),
		.format = st_row_text(row, 7),
		.event_id = st_row_text(row, 8),
		.type = st_row_text(row, 9),
		.at = st_row_text(row, 10),
		.app = st_row_text(row, 11),
		.group = st_row_text(row, 12),
		.event = st_row_text(row, 13),
	};
	return e->cb(e->cls, &d);
}

int64_t st_outbox_fold_due(st_conn *c)
{
	static const st_stmt q = {
		"outbox_fold_due",
		"SELECT coalesce(sum(fold_group_deltas(a.app_id)), 0)::bigint FROM (SELECT DISTINCT"
		" o.app_id FROM alert_outbox o WHERE o.due_at <= now()"
		" AND (o.leased_until IS NULL OR o.leased_until < now())) a",
		0};
	int64_t folded = 0;
	int rc = st_exec(c, &q, NULL, 0, st_read_int64, &folded);
	return rc < 0 ? rc : folded;
}

int st_outbox_claim(st_conn *c, int limit, int lease_s, st_delivery_cb cb, void *cls)
{
	static const st_stmt q = {
		"outbox_claim",
		"SELECT id, app_id, attempt, age_s, webhook, url, secret, format, event_id, type, "
		"at,"
		" app, grp::text, event::text FROM claim_deliveries($1::integer, $2::integer)",
		2};
	struct claim_each e = {cb, cls};
	return ST_EXEC(c, &q, read_delivery, &e, ST_INT64(limit), ST_INT64(lease_s));
}

static const char *result_name(st_delivery_result r)
{
	return r == ST_DELIVERED ? "delivered" : r == ST_FAILED ? "failed" : "gave_up";
}

/* The attempt into the webhook's log, which keeps its last 100. */
static int log_attempt(st_conn *c, int64_t app_id, const char *webhook, const char *event_id,
		       const char *type, int attempt, const char *result, long status,
		       const char *error)
{
	static const st_stmt log = {
		"delivery_log",
		"INSERT INTO webhook_deliveries (app_id, webhook, event_id, type, attempt, result,"
		" status, error) SELECT $1, $2, $3::uuid, $4, $5::integer, $6, nullif($7, 0),"
		" $8 WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.app_id = $1 AND w.name = $2)",
		8};
	static const st_stmt prune = {
		"delivery_log_prune",
		"DELETE FROM webhook_deliveries d WHERE d.app_id = $1 AND d.webhook = $2"
		" AND d.id < (SELECT min(x.id) FROM (SELECT id FROM webhook_deliveries"
		" WHERE app_id = $1 AND webhook = $2 ORDER BY id DESC LIMIT 100) x)",
		2};
	int rc = ST_EXEC(c, &log, NULL, NULL, ST_INT64(app_id), ST_TEXT(webhook), ST_TEXT(event_id),
			 ST_TEXT(type), ST_INT64(attempt), ST_TEXT(result), ST_INT64(status),
			 ST_TEXT(error));
	if (rc >= 0)
		rc = ST_EXEC(c, &prune, NULL, NULL, ST_INT64(app_id), ST_TEXT(webhook));
	return rc;
}

int st_outbox_done(st_conn *c, const st_delivery *d, st_delivery_result result, long status,
		   const char *error, int retry_s)
{
	/* Only while the row is still this attempt's: a lease that ran out
	 * may have let another server claim it, whose outcome counts. */
	static const st_stmt finish = {
		"outbox_finish", "DELETE FROM alert_outbox WHERE id = $1 AND attempts = $2", 2};
	static const st_stmt retry = {"outbox_retry",
				      "UPDATE alert_outbox SET leased_until = NULL,"
				      " due_at = now() + make_interval(secs => $3::integer)"
				      " WHERE id = $1 AND attempts = $2",
				      3};
	int rc = result == ST_FAILED
			 ? ST_EXEC(c, &retry, NULL, NULL, ST_INT64(d->id), ST_INT64(d->attempt),
				   ST_INT64(retry_s))
			 : ST_EXEC(c, &finish, NULL, NULL, ST_INT64(d->id), ST_INT64(d->attempt));
	if (rc <= 0)
		return rc;
	return log_attempt(c, d->app_id, d->webhook, d->event_id, d->type, d->attempt,
			   result_name(result), status, error);
}

int st_webhook_log_test(st_conn *c, int64_t app_id, const char *name, const char *event_id,
			bool delivered, long status, const char *error)
{
	return log_attempt(c, app_id, name, event_id, "test", 1, delivered ? "delivered" : "failed",
			   status, error);
}

static int read_stats(void *cls, const st_row *row)
{
	int64_t **out = cls;
	*out[0] = st_row_int64(row, 0);
	*out[1] = st_row_int64(row, 1);
	return 0;
}

int st_outbox_stats(st_conn *c, int64_t *depth, int64_t *oldest_s)
{
	static const st_stmt q = {
		"outbox_stats",
		"SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)::bigint"
		" FROM alert_outbox",
		0};
	int64_t *out[] = {depth, oldest_s};
	*depth = *oldest_s = 0;
	return st_exec(c, &q, NULL, 0, read_stats, out);
}
