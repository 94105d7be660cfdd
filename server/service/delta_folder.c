/* delta_folder.c — see delta_folder.h. */
#include "common/log.h"
#include "server/service/background.h"
#include "server/service/delta_folder.h"
#include "server/service/leases.h"
#include "server/service/metrics.h"
#include "store/groups.h"
#include "store/lifecycle.h"

static int reopen_cb(st_conn *c, void *cls)
{
	(void)cls;
	return st_lifecycle_reopen_expired(c);
}

typedef struct app_fold {
	int64_t app_id, folded;
} app_fold;

static int fold_cb(st_conn *c, void *cls)
{
	app_fold *f = cls;
	f->folded = st_group_deltas_fold(c, f->app_id);
	return f->folded < 0 ? (int)f->folded : 0;
}

/* Folds APP_ID's waiting deltas in a transaction of its own: 0, or a
 * negative st_status. */
static int fold_app(int64_t app_id)
{
	app_fold f = {app_id, 0};
	return st_run_tx("fold_group_deltas", fold_cb, &f);
}

int srv_deltas_fold_then_read(int64_t app_id, const char *name, st_tx_cb cb, void *cls)
{
	int rc = fold_app(app_id);
	return rc < 0 ? rc : st_run_tx(name, cb, cls);
}

static srv_background bg = SRV_BACKGROUND_INIT;

/* Apps looked at per pass: those with deltas, up to this many, from the
 * one after the last looked at, so every app has its turn. */
#define MAX_APPS 1024
/* Seconds to the next pass up to which a server keeps its fold leases. */
#define KEEP_LEASES_S 5

/* The apps with deltas whose fold lease this server holds or can take,
 * then back to its share of the apps (SPEC §12): another server folds
 * the rest. An app whose fold fails does not keep the others waiting.
 * 0, or ST_SOFT_ERROR when the database could not be reached. */
static int fold_held_apps(int64_t fold_interval)
{
	static int64_t apps[MAX_APPS];
	static int64_t after;
	int64_t n_apps = 0;
	int n = srv_lease_fold_work(after, apps, MAX_APPS, &n_apps);
	if (n < 0)
		return ST_SOFT_ERROR;
	after = n == MAX_APPS ? apps[n - 1] : 0;
	int64_t servers = srv_lease_servers();
	int unreachable = 0;
	for (int i = 0; i < n; i++) {
		if (!srv_lease_take(ST_LEASE_FOLD, apps[i]))
			continue;
		app_fold f = {apps[i], 0};
		int rc = st_run_tx("fold_group_deltas", fold_cb, &f);
		if (rc == ST_SOFT_ERROR)
			unreachable++;
		else if (rc < 0)
			cm_log(CM_ERROR, "deltas: app %lld could not be folded",
			       (long long)apps[i]);
		else
			srv_metrics_folded((uint64_t)f.folded);
	}
	/* A server that folds rarely (a longer STALLSCOPE_FOLD_INTERVAL than
	 * a lease should wait) keeps no app waiting for it. */
	int64_t share = fold_interval > KEEP_LEASES_S ? 0 : (n_apps + servers - 1) / servers;
	srv_lease_trim(ST_LEASE_FOLD, share, apps, (size_t)n);
	return unreachable ? ST_SOFT_ERROR : 0;
}

/* Deltas wait at most an interval (a second by default) for a fold
 * nobody asked for: the table stays that many seconds of reports, and a
 * fold takes a hot group's interval as one row update. */
static int pass(void *cls)
{
	const srv_config *cfg = cls;
	bool reachable = fold_held_apps(cfg->fold_interval) == 0;
	/* Groups ignored until a time now past open again (SPEC §11.1): the
	 * same second's loop, a probe of an index nearly always empty, by
	 * the server holding the database-wide chores. */
	if (srv_lease_take(ST_LEASE_COORDINATOR, 0) &&
	    st_run_tx("lifecycle_reopen", reopen_cb, NULL) < 0)
		cm_log(CM_WARN, "lifecycle: ignores could not be checked");
	if (!reachable) {
		cm_log(CM_WARN, "deltas: database unavailable, retrying in 10 s");
		return 10;
	}
	return (int)cfg->fold_interval;
}

int srv_delta_folder_start(const srv_config *cfg)
{
	return srv_background_start(&bg, pass, (void *)cfg);
}

void srv_delta_folder_stop(void)
{
	srv_background_stop(&bg);
}
