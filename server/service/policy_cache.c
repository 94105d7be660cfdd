/*
 * policy_cache.c — see policy_cache.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/service/policy_cache.h"
#include "store/store.h"

/* Direct-mapped by app id: a deployment has a handful of apps, and a
 * collision only costs a read. */
#define SLOTS 256

typedef struct slot {
	int64_t app_id; /* 0: empty (app ids start at 1) */
	st_app_config cfg;
} slot;

static slot slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static slot *slot_of(int64_t app_id)
{
	return &slots[(uint64_t)app_id % SLOTS];
}

static int copy_config(const st_app_config *from, st_app_config *to)
{
	*to = *from;
	to->grouping_rules = from->grouping_rules ? strdup(from->grouping_rules) : NULL;
	return from->grouping_rules && !to->grouping_rules ? -1 : 0;
}

typedef struct reading {
	int64_t app_id;
	st_app_config cfg;
} reading;

static int read_tx(st_conn *c, void *cls)
{
	reading *r = cls;
	st_app_config_clear(&r->cfg);
	return st_config_get(c, r->app_id, &r->cfg);
}

int srv_policy_refresh(int64_t app_id, st_app_config *out)
{
	reading t = {.app_id = app_id};
	memset(out, 0, sizeof *out);
	int rc = st_run_autocommit("config_get", read_tx, &t);
	if (rc < 0) {
		st_app_config_clear(&t.cfg);
		return rc;
	}
	st_app_config kept;
	if (copy_config(&t.cfg, &kept) == 0) {
		pthread_mutex_lock(&lock);
		slot *s = slot_of(app_id);
		/* Never replace a newer version read by another thread. */
		if (s->app_id != app_id || s->cfg.version <= kept.version) {
			st_app_config_clear(&s->cfg);
			s->app_id = app_id;
			s->cfg = kept;
		} else {
			st_app_config_clear(&kept);
		}
		pthread_mutex_unlock(&lock);
	}
	*out = t.cfg;
	return 0;
}

int srv_policy_get(int64_t app_id, st_app_config *out)
{
	memset(out, 0, sizeof *out);
	int hit = 0;
	pthread_mutex_lock(&lock);
	slot *s = slot_of(app_id);
	if (s->app_id == app_id)
		hit = copy_config(&s->cfg, out) == 0;
	pthread_mutex_unlock(&lock);
	if (hit)
		return 0;
	st_app_config_clear(out);
	return srv_policy_refresh(app_id, out);
}

void srv_policy_cache_free(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < SLOTS; i++) {
		st_app_config_clear(&slots[i].cfg);
		slots[i].app_id = 0;
	}
	pthread_mutex_unlock(&lock);
}
