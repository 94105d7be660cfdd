/* metrics.c — Prometheus counters; see metrics.h. */
#include "server/service/leases.h"
#include "server/service/metrics.h"
#include "server/service/symbols.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

/* Status codes counted on their own; anything else lands in "other". */
static const unsigned statuses[] = {0,   200, 201, 202, 204, 400, 401, 403,
				    404, 405, 409, 413, 414, 415, 429, 500,
				    503};
#define NSTATUS (sizeof statuses / sizeof statuses[0] + 1)

/* Upper bounds of the latency buckets, in seconds. */
static const double buckets[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				 0.5,   1,     2.5,  5,     10,   30,  120};
#define NBUCKETS (sizeof buckets / sizeof buckets[0] + 1) /* + +Inf */

typedef struct route_stats {
	atomic_uint_fast64_t by_status[NSTATUS];
	atomic_uint_fast64_t bucket[NBUCKETS]; /* not cumulative */
	atomic_uint_fast64_t micros;
	atomic_uint_fast64_t count;
} route_stats;

static route_stats *per_route; /* [nroutes + 1]: the last is "no route" */
static size_t nroutes;
static srv_metrics_route_name route_name;
static atomic_uint_fast64_t uploads[2];    /* [ok] */
static atomic_uint_fast64_t reprocessed;
static atomic_uint_fast64_t folded;
static atomic_uint_fast64_t symcaches[2];  /* [ok] */
static atomic_uint_fast64_t symcache_micros;
static atomic_uint_fast64_t ingest_commits, ingest_committed;
static atomic_long ingest_queued, ingest_in_flight;
static atomic_uint_fast64_t webhook_deliveries[3]; /* by st_delivery_result */

int srv_metrics_init(size_t routes, srv_metrics_route_name name)
{
	nroutes = routes;
	route_name = name;
	per_route = calloc(nroutes + 1, sizeof *per_route);
	return per_route ? 0 : -1;
}

void srv_metrics_free(void)
{
	free(per_route);
	per_route = NULL;
}

static size_t status_slot(unsigned status)
{
	for (size_t i = 0; i < NSTATUS - 1; i++)
		if (statuses[i] == status)
			return i;
	return NSTATUS - 1;
}

void srv_metrics_request(int route, unsigned status, double seconds)
{
	route_stats *r = &per_route[route < 0 ? nroutes : (size_t)route];
	atomic_fetch_add(&r->by_status[status_slot(status)], 1);
	size_t b = 0;
	while (b < NBUCKETS - 1 && seconds > buckets[b])
		b++;
	atomic_fetch_add(&r->bucket[b], 1);
	atomic_fetch_add(&r->micros, (uint64_t)(seconds * 1e6));
	atomic_fetch_add(&r->count, 1);
}

void srv_metrics_ingest_commit(size_t reports)
{
	atomic_fetch_add(&ingest_commits, 1);
	atomic_fetch_add(&ingest_committed, reports);
}

void srv_metrics_ingest_queue(long delta)
{
	atomic_fetch_add(&ingest_queued, delta);
}

void srv_metrics_ingest_in_flight(long delta)
{
	atomic_fetch_add(&ingest_in_flight, delta);
}

void srv_metrics_upload(bool ok)
{
	atomic_fetch_add(&uploads[ok], 1);
}

void srv_metrics_webhook_delivery(st_delivery_result result)
{
	if ((unsigned)result < 3)
		atomic_fetch_add(&webhook_deliveries[result], 1);
}

void srv_metrics_folded(uint64_t deltas)
{
	atomic_fetch_add(&folded, deltas);
}

void srv_metrics_reprocessed(uint64_t reports)
{
	atomic_fetch_add(&reprocessed, reports);
}

void srv_metrics_symcache_build(bool ok, double seconds)
{
	atomic_fetch_add(&symcaches[ok], 1);
	atomic_fetch_add(&symcache_micros, (uint64_t)(seconds * 1e6));
}

typedef struct buf {
	char *data;
	size_t len, cap;
	bool failed;
} buf;

static void put(buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(buf *b, const char *fmt, ...)
{
	for (int tries = 0; tries < 2 && !b->failed; tries++) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t cap = 2 * b->cap + (size_t)n + 1;
		char *grown = realloc(b->data, cap);
		if (!grown) {
			b->failed = true;
			return;
		}
		b->data = grown;
		b->cap = cap;
	}
}

/* Route R's labels; R == nroutes is "no route". */
static void labels(size_t r, const char **method, const char **pattern)
{
	if (r < nroutes) {
		route_name(r, method, pattern);
	} else {
		*method = "";
		*pattern = "none";
	}
}

static void render_requests(buf *b)
{
	put(b, "# HELP stallscope_http_requests_total HTTP requests by route "
	       "pattern and status.\n"
	       "# TYPE stallscope_http_requests_total counter\n");
	for (size_t r = 0; r <= nroutes; r++) {
		const char *method, *pattern;
		labels(r, &method, &pattern);
		for (size_t s = 0; s < NSTATUS; s++) {
			uint64_t n = atomic_load(&per_route[r].by_status[s]);
			if (!n)
				continue;
			char status[16];
			if (s < NSTATUS - 1)
				snprintf(status, sizeof status, "%u",
					 statuses[s]);
			else
				snprintf(status, sizeof status, "other");
			put(b, "stallscope_http_requests_total{method=\"%s\","
			       "route=\"%s\",status=\"%s\"} %" PRIu64 "\n",
			    method, pattern, status, n);
		}
	}
	put(b, "# HELP stallscope_http_request_duration_seconds Time from "
	       "the request line to the end of the reply.\n"
	       "# TYPE stallscope_http_request_duration_seconds histogram\n");
	for (size_t r = 0; r <= nroutes; r++) {
		uint64_t count = atomic_load(&per_route[r].count);
		if (!count)
			continue;
		const char *method, *pattern;
		labels(r, &method, &pattern);
		uint64_t cumulative = 0;
		for (size_t i = 0; i < NBUCKETS; i++) {
			cumulative += atomic_load(&per_route[r].bucket[i]);
			char le[32];
			if (i < NBUCKETS - 1)
				snprintf(le, sizeof le, "%g", buckets[i]);
			else
				snprintf(le, sizeof le, "+Inf");
			put(b, "stallscope_http_request_duration_seconds_bucket"
			       "{method=\"%s\",route=\"%s\",le=\"%s\"} %" PRIu64
			       "\n",
			    method, pattern, le, cumulative);
		}
		put(b, "stallscope_http_request_duration_seconds_sum{method="
		       "\"%s\",route=\"%s\"} %.6f\n"
		       "stallscope_http_request_duration_seconds_count{method="
		       "\"%s\",route=\"%s\"} %" PRIu64 "\n",
		    method, pattern,
		    (double)atomic_load(&per_route[r].micros) / 1e6, method,
		    pattern, count);
	}
}

/* dSYM uploads and the symcaches built from them. */
static void render_symbols(buf *b)
{
	put(b,
	    "# HELP stallscope_dsym_uploads_total dSYM uploads by "
	    "outcome.\n# TYPE stallscope_dsym_uploads_total counter\n"
	    "stallscope_dsym_uploads_total{result=\"ok\"} %" PRIu64 "\n"
	    "stallscope_dsym_uploads_total{result=\"error\"} %" PRIu64 "\n",
	    (uint64_t)atomic_load(&uploads[1]), (uint64_t)atomic_load(&uploads[0]));
	put(b,
	    "# HELP stallscope_symcache_builds_total Symcaches built from "
	    "uploaded slices.\n"
	    "# TYPE stallscope_symcache_builds_total counter\n"
	    "stallscope_symcache_builds_total{result=\"ok\"} %" PRIu64 "\n"
	    "stallscope_symcache_builds_total{result=\"error\"} %" PRIu64 "\n"
	    "# HELP stallscope_symcache_build_seconds_total Time spent "
	    "building symcaches.\n"
	    "# TYPE stallscope_symcache_build_seconds_total counter\n"
	    "stallscope_symcache_build_seconds_total %.6f\n",
	    (uint64_t)atomic_load(&symcaches[1]), (uint64_t)atomic_load(&symcaches[0]),
	    (double)atomic_load(&symcache_micros) / 1e6);
	put(b,
	    "# HELP stallscope_reprocessed_reports_total Reports this process "
	    "symbolized again and moved after their debug files arrived.\n"
	    "# TYPE stallscope_reprocessed_reports_total counter\n"
	    "stallscope_reprocessed_reports_total %" PRIu64 "\n",
	    (uint64_t)atomic_load(&reprocessed));
}

/* The background work this server does, and its share of it. */
static void render_background(buf *b)
{
	put(b,
	    "# HELP stallscope_background_folded_deltas_total Reports' deltas this "
	    "process's background folder counted into the aggregates.\n"
	    "# TYPE stallscope_background_folded_deltas_total counter\n"
	    "stallscope_background_folded_deltas_total %" PRIu64 "\n"
	    "# HELP stallscope_leases_held Background work this process holds the "
	    "lease of: apps whose deltas it folds, and the database-wide chores.\n"
	    "# TYPE stallscope_leases_held gauge\n"
	    "stallscope_leases_held{job=\"fold\"} %zu\n"
	    "stallscope_leases_held{job=\"coordinator\"} %zu\n",
	    (uint64_t)atomic_load(&folded), srv_leases_held(ST_LEASE_FOLD),
	    srv_leases_held(ST_LEASE_COORDINATOR));
}

/* The LRU of open symcaches. */
static void render_symcache_lru(buf *b)
{
	ing_lru_stats lru;
	srv_symbols_stats(&lru);
	put(b,
	    "# HELP stallscope_symcache_lookups_total Symcache opens asked of "
	    "the LRU, by whether the file was open already.\n"
	    "# TYPE stallscope_symcache_lookups_total counter\n"
	    "stallscope_symcache_lookups_total{result=\"hit\"} %" PRIu64 "\n"
	    "stallscope_symcache_lookups_total{result=\"miss\"} %" PRIu64 "\n"
	    "# HELP stallscope_symcache_open Symcaches mapped now.\n"
	    "# TYPE stallscope_symcache_open gauge\n"
	    "stallscope_symcache_open %zu\n"
	    "# HELP stallscope_symcache_evictions_total Symcaches closed to stay "
	    "within STALLSCOPE_SYMCACHE_OPEN.\n"
	    "# TYPE stallscope_symcache_evictions_total counter\n"
	    "stallscope_symcache_evictions_total %" PRIu64 "\n",
	    lru.hits, lru.misses, lru.open, lru.evictions);
}

static void render_ingest(buf *b)
{
	put(b,
	    "# HELP stallscope_ingest_commits_total Transactions that stored "
	    "ingested reports (each stores the reports queued meanwhile).\n"
	    "# TYPE stallscope_ingest_commits_total counter\n"
	    "stallscope_ingest_commits_total %" PRIu64 "\n"
	    "# HELP stallscope_ingest_commit_reports_total Reports those "
	    "transactions stored or refused.\n"
	    "# TYPE stallscope_ingest_commit_reports_total counter\n"
	    "stallscope_ingest_commit_reports_total %" PRIu64 "\n"
	    "# HELP stallscope_ingest_queued_reports Reports waiting for "
	    "their answer: queued or being stored.\n"
	    "# TYPE stallscope_ingest_queued_reports gauge\n"
	    "stallscope_ingest_queued_reports %ld\n"
	    "# HELP stallscope_ingest_batches_in_flight Batches of reports "
	    "sent to the database and not answered yet.\n"
	    "# TYPE stallscope_ingest_batches_in_flight gauge\n"
	    "stallscope_ingest_batches_in_flight %ld\n",
	    (uint64_t)atomic_load(&ingest_commits), (uint64_t)atomic_load(&ingest_committed),
	    atomic_load(&ingest_queued), atomic_load(&ingest_in_flight));
}

static int outbox_cb(st_conn *c, void *cls)
{
	int64_t *v = cls;
	return st_outbox_stats(c, &v[0], &v[1]);
}

/* This process's attempts, and the outbox every server shares: its
 * depth and oldest event's age come from the database (left out while it
 * cannot be read). */
static void render_alerts(buf *b)
{
	put(b,
	    "# HELP stallscope_webhook_deliveries_total Webhook delivery attempts "
	    "this process made, by result.\n"
	    "# TYPE stallscope_webhook_deliveries_total counter\n"
	    "stallscope_webhook_deliveries_total{result=\"delivered\"} %" PRIu64 "\n"
	    "stallscope_webhook_deliveries_total{result=\"failed\"} %" PRIu64 "\n"
	    "stallscope_webhook_deliveries_total{result=\"gave_up\"} %" PRIu64 "\n",
	    (uint64_t)atomic_load(&webhook_deliveries[ST_DELIVERED]),
	    (uint64_t)atomic_load(&webhook_deliveries[ST_FAILED]),
	    (uint64_t)atomic_load(&webhook_deliveries[ST_GAVE_UP]));
	int64_t v[2];
	if (st_run_tx("outbox_stats", outbox_cb, v) < 0)
		return;
	put(b,
	    "# HELP stallscope_outbox_depth Webhook deliveries queued, all servers.\n"
	    "# TYPE stallscope_outbox_depth gauge\n"
	    "stallscope_outbox_depth %" PRId64 "\n"
	    "# HELP stallscope_outbox_oldest_seconds Age of the oldest undelivered "
	    "event (0 when none).\n"
	    "# TYPE stallscope_outbox_oldest_seconds gauge\n"
	    "stallscope_outbox_oldest_seconds %" PRId64 "\n",
	    v[0], v[1]);
}

static void render_store(buf *b)
{
	st_pool_stats pool;
	st_get_pool_stats(&pool);
	put(b,
	    "# HELP stallscope_db_pool_size Database connections the pool "
	    "may hold.\n# TYPE stallscope_db_pool_size gauge\n"
	    "stallscope_db_pool_size %u\n"
	    "# HELP stallscope_db_pool_in_use Database connections handed "
	    "out.\n# TYPE stallscope_db_pool_in_use gauge\n"
	    "stallscope_db_pool_in_use %u\n"
	    "# HELP stallscope_db_errors_total Failed statements and "
	    "connection attempts.\n"
	    "# TYPE stallscope_db_errors_total counter\n"
	    "stallscope_db_errors_total %" PRIu64 "\n",
	    pool.size, pool.in_use, pool.errors);
	st_read_stats rs;
	st_get_read_stats(&rs);
	if (!rs.configured)
		return;
	/* Unknown lag (the replica down, or nothing replayed yet) is NaN,
	 * which alerting rules see as absent rather than as zero. */
	put(b,
	    "# HELP stallscope_read_replica_in_use 1 while the dashboard's reads "
	    "go to STALLSCOPE_READ_DATABASE_URL, 0 while they fall back to the primary.\n"
	    "# TYPE stallscope_read_replica_in_use gauge\n"
	    "stallscope_read_replica_in_use %d\n"
	    "# HELP stallscope_read_replica_lag_seconds How far the replica's replay "
	    "is behind the primary (0 when it has replayed all it received while "
	    "streaming).\n"
	    "# TYPE stallscope_read_replica_lag_seconds gauge\n",
	    rs.in_use ? 1 : 0);
	if (rs.in_use && rs.lag_seconds >= 0)
		put(b, "stallscope_read_replica_lag_seconds %.3f\n", rs.lag_seconds);
	else
		put(b, "stallscope_read_replica_lag_seconds NaN\n");
}

char *srv_metrics_render(size_t *out_len)
{
	buf b = {malloc(8192), 0, 8192, false};
	if (!b.data)
		return NULL;
	render_requests(&b);
	render_symbols(&b);
	render_ingest(&b);
	render_background(&b);
	render_alerts(&b);
	render_store(&b);
	render_symcache_lru(&b);
	if (b.failed) {
		free(b.data);
		return NULL;
	}
	*out_len = b.len;
	return b.data;
}
