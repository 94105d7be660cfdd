/*
 * alerts.h — webhooks, the outbox of their deliveries and the log of
 * attempts (SPEC §11.2; schema/043, docs/ALERTS.md). Events reach the
 * outbox by a trigger in their own transaction (group_events_to_outbox);
 * these functions are the API's and the delivery worker's. Same
 * conventions as store.h: runs inside a st_run_tx callback; negative =
 * st_status.
 *
 * Memory: inputs are borrowed for the call; JSON comes back as one
 * malloc'ed string (*OUT_JSON, caller frees); a row's strings passed to a
 * callback are valid only during the callback.
 */
#ifndef STALLSCOPE_STORE_ALERTS_H
#define STALLSCOPE_STORE_ALERTS_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

typedef struct st_webhook {
	const char *name, *url, *secret;
	const char *events; /* a PostgreSQL text[] literal: {new_group,spike} */
	const char *format; /* json or slack */
} st_webhook;

/* Creates or replaces W for APP_ID: 1 created, 0 replaced. Deliveries
 * already queued for it go to its new URL, signed with its new secret. */
int st_webhook_put(st_conn *c, int64_t app_id, const st_webhook *w);

/* {"webhooks":[{"name","url","events","format","created_at","updated_at"}]}
 * by name — never the secret. Always 1. */
int st_webhooks_json(st_conn *c, int64_t app_id, char **out_json);

/* 1 deleted (with its queued deliveries and log), 0 when none. */
int st_webhook_delete(st_conn *c, int64_t app_id, const char *name);

/* {"deliveries":[{"at","event_id","type","attempt","result","status",
 * "error"}]} newest first (the last 100 kept); 0 when no such webhook. */
int st_webhook_deliveries_json(st_conn *c, int64_t app_id, const char *name, char **out_json);

/* What a send needs of webhook NAME; strings owned by the struct
 * (st_webhook_target_clear). */
typedef struct st_webhook_target {
	char *url, *secret, *format, *app;
	char *event_id; /* a fresh one, for a test send */
	char *now;	/* the database's time, RFC 3339 */
} st_webhook_target;

/* 1 with *OUT, 0 when APP_ID has no webhook NAME. *OUT starts zeroed or
 * filled by an earlier call: what it holds is freed first. */
int st_webhook_target_get(st_conn *c, int64_t app_id, const char *name, st_webhook_target *out);
void st_webhook_target_clear(st_webhook_target *t);

/* One claimed delivery, everything the body and the send need. */
typedef struct st_delivery {
	int64_t id, app_id;
	int attempt;   /* 1 for the first */
	int64_t age_s; /* since the event was queued */
	const char *webhook, *url, *secret, *format;
	const char *event_id, *type, *at, *app;
	/* The group now: {"key","culprit","frames","top_frames","reports",
	 * "users","first_seen","last_seen","status","affected","rate",…}
	 * with the event's "version", "day" and "reports" under "event". */
	const char *group, *event;
} st_delivery;

typedef int (*st_delivery_cb)(void *cls, const st_delivery *d);

/* Folds the deltas of the apps with a delivery due (fold_group_deltas),
 * so a claim's bodies count the reports that caused their events: in a
 * transaction of its own, before the claim's. Returns how many reports. */
int64_t st_outbox_fold_due(st_conn *c);

/* Claims at most LIMIT due deliveries not leased by a live server (FOR
 * UPDATE SKIP LOCKED), leases them for LEASE_S seconds and counts the
 * attempt; CB sees each. Commit before sending: the lease is what keeps
 * other servers off. Returns how many. */
int st_outbox_claim(st_conn *c, int limit, int lease_s, st_delivery_cb cb, void *cls);

typedef enum st_delivery_result {
	ST_DELIVERED,
	ST_FAILED, /* retried after RETRY_S */
	ST_GAVE_UP,
} st_delivery_result;

/* Records an attempt of delivery D (status 0 when none, ERROR NULL when
 * delivered): delivered and gave-up rows leave the outbox, a failed one is
 * due again in RETRY_S seconds; the attempt is logged (the last 100 per
 * webhook kept). Nothing when another server has claimed the row since
 * (its lease ran out): that one's attempt counts. */
int st_outbox_done(st_conn *c, const st_delivery *d, st_delivery_result result, long status,
		   const char *error, int retry_s);

/* Logs a test send to webhook NAME. */
int st_webhook_log_test(st_conn *c, int64_t app_id, const char *name, const char *event_id,
			bool delivered, long status, const char *error);

/* Deliveries queued, and the age in seconds of the oldest (0 when none). */
int st_outbox_stats(st_conn *c, int64_t *depth, int64_t *oldest_s);

#endif
