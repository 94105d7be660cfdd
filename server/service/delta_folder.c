/* delta_folder.c — see delta_folder.h. */
#include "common/log.h"
#include "server/service/background.h"
#include "server/service/delta_folder.h"
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

/* Deltas wait at most an interval (a second by default) for a fold
 * nobody asked for: the table stays that many seconds of reports, and a
 * fold takes a hot group's interval as one row update. */
static int pass(void *cls)
{
	const srv_config *cfg = cls;
	if (srv_deltas_fold(0) < 0) {
		cm_log(CM_WARN, "deltas: database unavailable, retrying in 10 s");
		return 10;
	}
	/* Groups ignored until a time now past open again (SPEC §11.1): the
	 * same second's loop, a probe of an index nearly always empty. */
	if (st_run_tx("lifecycle_reopen", reopen_cb, NULL) < 0)
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
