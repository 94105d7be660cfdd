/*
 * reprocess.c — see reprocess.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "ingest/parse.h"
#include "server/service/background.h"
#include "server/service/reprocess.h"
#include "server/service/stored_form.h"
#include "store/reports.h"

/* Reports taken per look; the loop goes on while a look finds a full batch. */
#define BATCH 64

typedef struct candidates {
	st_candidate v[BATCH];
	size_t n;
} candidates;

static int add_candidate(void *cls, const st_candidate *cand)
{
	candidates *c = cls;
	if (c->n < BATCH)
		c->v[c->n++] = *cand;
	return 0;
}

static int candidates_tx(st_conn *c, void *cls)
{
	((candidates *)cls)->n = 0;
	return st_reprocess_candidates(c, BATCH, add_candidate, cls);
}

typedef struct prepare_tx {
	const st_candidate *cand;
	st_report_meta meta;
	st_app_config cfg;
} prepare_tx;

static int prepare_cb(st_conn *c, void *cls)
{
	prepare_tx *t = cls;
	st_report_meta_clear(&t->meta);
	st_app_config_clear(&t->cfg);
	int rc = st_report_meta_get(c, t->cand->app_id, t->cand->day, t->cand->report, &t->meta);
	if (rc > 0)
		rc = st_config_get(c, t->cand->app_id, &t->cfg);
	return rc;
}

typedef struct move_tx {
	const st_candidate *cand;
	const srv_stored_form *form;
	st_report_meta now; /* the row as the transaction sees it */
	bool moved;
} move_tx;

static int move_cb(st_conn *c, void *cls)
{
	move_tx *t = cls;
	const st_candidate *cand = t->cand;
	t->moved = false;
	int rc = st_report_lock(c, cand->report);
	if (rc <= 0)
		return rc; /* another instance has it, or it was purged */
	st_report_meta_clear(&t->now);
	rc = st_report_meta_get(c, cand->app_id, cand->day, cand->report, &t->now);
	if (rc <= 0)
		return rc;
	const srv_stored_form *f = t->form;
	st_group_ref old = {
		.key1 = t->now.key1, .key2 = t->now.key2, .frames1 = "[]", .frames2 = "[]",
		.user_id = t->now.user_id, .day = cand->day, .at = t->now.received_at,
		.app_version = t->now.app_version, .os_version = t->now.os_version,
		.device = t->now.device, .kind = t->now.kind,
	};
	st_group_ref fresh = old;
	fresh.key1 = f->s.grouping.key1;
	fresh.key2 = f->s.grouping.key2;
	fresh.frames1 = f->frames1;
	fresh.frames2 = f->frames2;
	st_document symbolized = srv_stored_symbolized(f);
	if ((rc = st_group_move(c, cand->app_id, &old, &fresh)) < 0 ||
	    (rc = st_report_update_symbols(c, cand->app_id, cand->day, cand->report,
					   f->s.grouping.key1, f->s.grouping.key2, f->pending,
					   &symbolized)) < 0 ||
	    (rc = st_report_waits_clear(c, cand->report)) < 0 ||
	    (rc = st_report_waits_add(c, cand->app_id, cand->report, cand->day, f->waits)) < 0)
		return rc;
	t->moved = true;
	return 1;
}

typedef struct give_up_tx {
	int64_t report;
} give_up_tx;

static int give_up_cb(st_conn *c, void *cls)
{
	return st_report_waits_clear(c, ((give_up_tx *)cls)->report);
}

/* One report: 1 moved, 0 nothing to do, negative st_status. */
static int reprocess_one(const char *data_dir, const st_candidate *cand)
{
	prepare_tx p = {.cand = cand};
	int rc = st_run_tx("reprocess_read", prepare_cb, &p);
	if (rc <= 0) {
		st_report_meta_clear(&p.meta);
		st_app_config_clear(&p.cfg);
		if (rc == 0) {
			/* Its day was purged: nothing left to wait for. */
			give_up_tx g = {cand->report};
			rc = st_run_tx("reprocess_give_up", give_up_cb, &g);
			return rc < 0 ? rc : 0;
		}
		return rc;
	}
	ing_batch *b = NULL;
	ing_error err;
	srv_symbol_set *set = NULL;
	srv_stored_form form;
	memset(&form, 0, sizeof form);
	int result = 0;
	if (ing_parse_native(p.meta.raw, strlen(p.meta.raw), NULL, NULL, &b, &err) != 0 ||
	    !b->entries[0].report) {
		/* Cannot happen for what we wrote; never retry it forever. */
		cm_log(CM_BUG, "report %lld: stored form unreadable: %s",
		       (long long)cand->report, b ? b->entries[0].error.message : err.message);
		give_up_tx g = {cand->report};
		result = st_run_tx("reprocess_give_up", give_up_cb, &g);
		result = result < 0 ? result : 0;
		goto done;
	}
	const ing_report *r = b->entries[0].report;
	ing_group_rules rules;
	const ing_report *list[1] = {r};
	if (srv_grouping_rules(p.cfg.grouping_rules, b->arena, &rules) != 0 ||
	    (result = srv_symbol_set_load(data_dir, cand->app_id, list, 1, true, &set)) < 0 ||
	    srv_stored_form_make(set, r, &rules, NULL, b->arena, &form) != 0) {
		result = result < 0 ? result : ST_HARD_ERROR;
		goto done;
	}
	move_tx m = {.cand = cand, .form = &form};
	result = st_run_tx("reprocess_move", move_cb, &m);
	st_report_meta_clear(&m.now);
	if (result >= 0)
		result = m.moved;
done:
	srv_stored_form_clear(&form);
	srv_symbol_set_free(set);
	ing_batch_free(b);
	st_report_meta_clear(&p.meta);
	st_app_config_clear(&p.cfg);
	return result;
}

int srv_reprocess_all(const char *data_dir, int64_t *out_done)
{
	int64_t done = 0;
	candidates *c = malloc(sizeof *c);
	if (!c)
		return ST_HARD_ERROR;
	int rc;
	for (;;) {
		rc = st_run_tx("reprocess_candidates", candidates_tx, c);
		if (rc < 0 || c->n == 0)
			break;
		size_t moved = 0;
		for (size_t i = 0; i < c->n && rc >= 0; i++) {
			rc = reprocess_one(data_dir, &c->v[i]);
			if (rc > 0)
				moved++;
		}
		done += (int64_t)moved;
		/* Nothing moved from a full look: the rest are locked by
		 * another instance; leave them to it. */
		if (rc < 0 || moved == 0 || c->n < BATCH)
			break;
	}
	free(c);
	if (out_done)
		*out_done = done;
	return rc < 0 ? rc : 0;
}

/* ---- the background thread ------------------------------------------------ */

static srv_background bg = SRV_BACKGROUND_INIT;
static const srv_config *cfg; /* the background thread's, from start */

static int pass(void *cls)
{
	(void)cls;
	int64_t done = 0;
	int rc = srv_reprocess_all(cfg->data_dir, &done);
	if (rc < 0)
		cm_log(CM_WARN, "reprocessing: database unavailable, retrying later");
	else if (done)
		cm_log(CM_INFO, "reprocessed %lld reports whose symbols arrived", (long long)done);
	return (int)cfg->reprocess_interval;
}

int srv_reprocess_start(const srv_config *config)
{
	cfg = config;
	return srv_background_start(&bg, pass, NULL);
}

void srv_reprocess_wake(void)
{
	srv_background_wake(&bg);
}

void srv_reprocess_stop(void)
{
	srv_background_stop(&bg);
}
