/*
 * measure_commit.c — see measure_commit.h.
 */
#include "server/service/measure_commit.h"

#include "store/measures.h"
#include "store/reports.h"

typedef struct commit {
	int64_t app_id;
	const char *day, *at, *user_id;
	bool sampled;
	const st_measure *m;
	srv_measure_outcome out;
} commit;

static int commit_tx(st_conn *c, void *cls)
{
	commit *x = cls;
	if (!x->sampled) {
		int listed = st_whitelist_holds(c, x->app_id, x->user_id, x->at);
		if (listed <= 0) {
			x->out = SRV_MEASURE_NOT_SAMPLED;
			return listed < 0 ? listed : 1;
		}
	}
	bool stored = false;
	int rc = st_measures_add(c, x->app_id, x->day, &x->m, 1, &stored);
	x->out = stored ? SRV_MEASURE_STORED : SRV_MEASURE_DUPLICATE;
	return rc < 0 ? rc : 1;
}

/* The store's copy of M (the store is below ingest). */
static st_measure store_form(const ing_measure *m)
{
	st_measure s = {
		.kind = m->kind == ING_MEASURE_STARTUP ? ST_MEASURE_STARTUP : ST_MEASURE_FRAMES,
		.key = m->key,
		.app_version = m->app_version,
		.warm = m->warm,
		.startup_ms = m->startup_ms,
		.application_create_ms = m->application_create_ms,
		.first_activity_create_ms = m->first_activity_create_ms,
		.scene = m->scene,
		.fps = m->fps,
	};
	for (int i = 0; i < ST_DROP_LEVELS; i++) {
		s.drop_level[i] = m->drop_level[i];
		s.drop_sum[i] = m->drop_sum[i];
	}
	return s;
}

int srv_measure_commit(int64_t app_id, const char *day, const char *at, bool sampled,
		       const ing_measure *m, srv_measure_outcome *out)
{
	st_measure s = store_form(m);
	commit x = {.app_id = app_id,
		    .day = day,
		    .at = at,
		    .user_id = m->user_id,
		    .sampled = sampled,
		    .m = &s};
	int rc = st_run_tx("measure_commit", commit_tx, &x);
	*out = x.out;
	return rc;
}
