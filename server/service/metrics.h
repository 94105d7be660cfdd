/*
 * metrics.h — process counters exposed at GET /metrics in Prometheus text
 * format: requests by route pattern and status, a latency histogram per
 * route, dSYM uploads, symcache builds, ingest commits and their queue,
 * webhook deliveries and the outbox, the database pool and its errors.
 *
 * Counters are lock-free atomics updated from any thread; srv_metrics_init
 * must run before the first update and srv_metrics_free after the last.
 */
#ifndef STALLSCOPE_SERVER_METRICS_H
#define STALLSCOPE_SERVER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/alerts.h"

/* Names the I-th route of the server's table: its METHOD and PATTERN
 * (static strings). */
typedef void (*srv_metrics_route_name)(size_t i, const char **method, const char **pattern);

/* Sizes the per-route tables for ROUTES routes, named by NAME. Returns 0/-1. */
int srv_metrics_init(size_t routes, srv_metrics_route_name name);
void srv_metrics_free(void);

/* A finished request. ROUTE is the index in the route table, or -1 when no
 * route matched; STATUS 0 when no reply was sent. */
void srv_metrics_request(int route, unsigned status, double seconds);

/* A dSYM upload that committed (OK) or was refused/failed. */
void srv_metrics_upload(bool ok);

/* One symcache built (OK) or failed, taking SECONDS. */
void srv_metrics_symcache_build(bool ok, double seconds);

/* REPORTS were reprocessed (moved after their debug files arrived). */
void srv_metrics_reprocessed(uint64_t reports);

/* The background folder counted DELTAS reports' deltas (the folds a
 * read asks for are not counted: this is the work leases share). */
void srv_metrics_folded(uint64_t deltas);

/* A group commit of REPORTS reports ended (server/service/ingest_commit.c). */
void srv_metrics_ingest_commit(size_t reports);

/* Reports waiting for their answer: DELTA +1 when one is queued, -N when
 * N are answered. */
void srv_metrics_ingest_queue(long delta);

/* Batches sent to the database and not answered yet: DELTA +1 when one is
 * sent, -1 when its answer (or failure) is in. */
void srv_metrics_ingest_in_flight(long delta);

/* One webhook delivery attempt ended: delivered, failed (to be retried)
 * or given up after 24 hours. */
void srv_metrics_webhook_delivery(st_delivery_result result);

/* The exposition text (malloc'ed, caller frees) and its length; NULL when
 * out of memory. */
char *srv_metrics_render(size_t *out_len);

#endif
