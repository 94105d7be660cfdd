/*
 * alert_delivery.h — each server's webhook delivery worker (SPEC §11.2,
 * docs/ALERTS.md): a background thread that claims due deliveries from
 * the shared outbox (store/alerts.h), sends them (webhook_send.h) and
 * records each attempt, retrying a failure 10 s later, then doubling, for
 * 24 hours. Also the bodies alerts carry and the API's test send.
 *
 * Memory: CFG passed to srv_alert_delivery_start must outlive the thread;
 * bodies are malloc'ed (caller frees).
 */
#ifndef STALLSCOPE_SERVER_ALERT_DELIVERY_H
#define STALLSCOPE_SERVER_ALERT_DELIVERY_H

#include <stddef.h>
#include <stdint.h>

#include "server/service/config.h"
#include "server/service/webhook_send.h"
#include "store/alerts.h"

/* How long a claimed delivery is kept from other servers: the send's
 * timeout and room to record it. A server that dies mid-send delays the
 * event by at most this. */
#define SRV_ALERT_LEASE_S    15
#define SRV_ALERT_TIMEOUT_MS 10000L
/* A failure this long after the event was queued is the last attempt. */
#define SRV_ALERT_GIVE_UP_S (24 * 3600)

int srv_alert_delivery_start(const srv_config *cfg);
void srv_alert_delivery_stop(void);

/* The body of delivery D in its webhook's format (json or slack), links
 * to the group under the dashboard's public URL; NULL when out of memory
 * or D's JSON is unreadable. */
char *srv_alert_body(const st_delivery *d, const srv_config *cfg, size_t *out_len);

/* Seconds until the next attempt after failed attempt number ATTEMPT (1
 * for the first) of an event queued AGE_S seconds ago: RETRY_S, doubling
 * each time, never past the 24 hours; -1 when there is none (give up). */
long srv_alert_retry_after(int attempt, int64_t age_s, unsigned retry_s);

/* Sends a "test" event to webhook NAME of APP_ID at once and logs the
 * attempt: 1 with *OUT, 0 when there is no such webhook, or a negative
 * st_status. */
int srv_alert_test_send(const srv_config *cfg, int64_t app_id, const char *name,
			srv_webhook_result *out);

#endif
