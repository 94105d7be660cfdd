/* retention.c — see retention.h. */
#include <stdlib.h>

#include "common/log.h"
#include "ingest/sampling.h"
#include "server/service/background.h"
#include "server/service/clock.h"
#include "server/service/leases.h"
#include "server/service/retention.h"
#include "store/activity.h"
#include "store/reports.h"

#define DAY_SECONDS 86400

int srv_retention_oldest_kept(st_conn *c, int64_t app_id, time_t now, char out[ING_DAY_LEN])
{
	st_app_config cfg;
	int rc = st_config_get(c, app_id, &cfg);
	int64_t days = cfg.retention_days;
	st_app_config_clear(&cfg);
	if (rc < 0)
		return rc;
	ing_utc_day(now - (time_t)(days - 1) * DAY_SECONDS, out);
	return 0;
}

typedef struct app_list {
	int64_t *ids;
	size_t n, cap;
} app_list;

static int add_app(void *cls, int64_t id)
{
	app_list *l = cls;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		int64_t *ids = realloc(l->ids, cap * sizeof *ids);
		if (!ids)
			return -1;
		l->ids = ids;
		l->cap = cap;
	}
	l->ids[l->n++] = id;
	return 0;
}

static int apps_cb(st_conn *c, void *cls)
{
	((app_list *)cls)->n = 0;
	return st_app_ids(c, add_app, cls);
}

typedef struct app_pass {
	int64_t app_id;
	time_t now;
	int64_t dropped;
} app_pass;

static int app_cb(st_conn *c, void *cls)
{
	app_pass *p = cls;
	char before[ING_DAY_LEN], today[ING_DAY_LEN], tomorrow[ING_DAY_LEN];
	int rc = srv_retention_oldest_kept(c, p->app_id, p->now, before);
	if (rc < 0)
		return rc;
	ing_utc_day(p->now, today);
	ing_utc_day(p->now + DAY_SECONDS, tomorrow);
	rc = st_reports_purge(c, p->app_id, before);
	if (rc < 0)
		return rc;
	p->dropped = rc;
	if ((rc = st_activity_purge(c, p->app_id, before)) < 0)
		return rc;
	if ((rc = st_report_partition_ensure(c, p->app_id, today)) < 0 ||
	    (rc = st_report_partition_ensure(c, p->app_id, tomorrow)) < 0)
		return rc;
	return 1;
}

int srv_retention_run(time_t now, int64_t *out_dropped)
{
	app_list apps = {0};
	int rc = st_run_tx("retention_apps", apps_cb, &apps);
	int64_t dropped = 0;
	for (size_t i = 0; rc >= 0 && i < apps.n; i++) {
		app_pass p = {apps.ids[i], now, 0};
		rc = st_run_tx("retention_app", app_cb, &p);
		dropped += p.dropped;
	}
	free(apps.ids);
	if (out_dropped)
		*out_dropped = dropped;
	return rc < 0 ? rc : 0;
}

static srv_background bg = SRV_BACKGROUND_INIT;

/* Seconds between two looks at whether this server took the
 * database-wide chores (its holder died). */
#define NOT_OURS_S 60

/* Once a day, by the server holding the database-wide chores (SPEC §12);
 * a server that takes them runs it at once (the day's run may have died
 * with the last holder: a second run drops nothing more). */
static int pass(void *cls)
{
	(void)cls;
	if (!srv_lease_take(ST_LEASE_COORDINATOR, 0))
		return NOT_OURS_S;
	int64_t dropped = 0;
	int rc = srv_retention_run(srv_now(), &dropped);
	if (rc < 0)
		cm_log(CM_WARN, "retention: database unavailable, retrying in an hour");
	else if (dropped)
		cm_log(CM_INFO, "retention: dropped %lld day partitions", (long long)dropped);
	return rc < 0 ? 3600 : DAY_SECONDS;
}

int srv_retention_start(void)
{
	return srv_background_start(&bg, pass, NULL);
}

void srv_retention_stop(void)
{
	srv_background_stop(&bg);
}
