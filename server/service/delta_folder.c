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

static int fold_cb(st_conn *c, void *cls)
{
	int64_t folded = st_group_deltas_fold(c, *(const int64_t *)cls);
	return folded < 0 ? (int)folded : 0;
}

int srv_deltas_fold(int64_t app_id)
{
	return st_run_tx("fold_group_deltas", fold_cb, &app_id);
}

int srv_deltas_fold_then_read(int64_t app_id, const char *name, st_tx_cb cb, void *cls)
{
	int rc = srv_deltas_fold(app_id);
	return rc < 0 ? rc : st_run_tx(name, cb, cls);
}

static srv_background bg = SRV_BACKGROUND_INIT;

/* Apps looked at per pass: those with deltas, up to this many (the rest
 * the next second). */
#define MAX_APPS 1024

typedef struct app_fold {
	int64_t app_id, folded;
} app_fold;

static int fold_count_cb(st_conn *c, void *cls)
{
	app_fold *f = cls;
	f->folded = st_group_deltas_fold(c, f->app_id);
	return f->folded < 0 ? (int)f->folded : 0;
}

/* The apps with deltas whose fold lease this server holds or can take,
 * then back to its share of the apps (SPEC §12): another server folds
 * the rest. 0, or a negative st_status. */
static int fold_held_apps(void)
{
	static int64_t apps[MAX_APPS];
	int64_t n_apps = 0;
	int n = srv_lease_fold_work(apps, MAX_APPS, &n_apps);
	if (n < 0)
		return n;
	int64_t servers = srv_lease_servers();
	for (int i = 0; i < n; i++) {
		if (!srv_lease_take(ST_LEASE_FOLD, apps[i]))
			continue;
		app_fold f = {apps[i], 0};
		int rc = st_run_tx("fold_group_deltas", fold_count_cb, &f);
		if (rc < 0)
			return rc;
		srv_metrics_folded((uint64_t)f.folded);
	}
	srv_lease_trim(ST_LEASE_FOLD, (n_apps + servers - 1) / servers, apps, (size_t)n);
	return 0;
}

/* Deltas wait at most an interval (a second by default) for a fold
 * nobody asked for: the table stays that many seconds of reports, and a
 * fold takes a hot group's interval as one row update. */
static int pass(void *cls)
{
	const srv_config *cfg = cls;
	if (fold_held_apps() < 0) {
		cm_log(CM_WARN, "deltas: database unavailable, retrying in 10 s");
		return 10;
	}
	/* Groups ignored until a time now past open again (SPEC §11.1): the
	 * same second's loop, a probe of an index nearly always empty, by
	 * the server holding the database-wide chores. */
	if (srv_lease_take(ST_LEASE_COORDINATOR, 0) &&
	    st_run_tx("lifecycle_reopen", reopen_cb, NULL) < 0)
		cm_log(CM_WARN, "lifecycle: ignores could not be checked");
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
