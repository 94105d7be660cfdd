/*
 * reprocess.c — see reprocess.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "ingest/matrix.h"
#include "ingest/parse.h"
#include "server/service/background.h"
#include "server/service/leases.h"
#include "server/service/metrics.h"
#include "server/service/reprocess.h"
#include "server/service/stored_form.h"
#include "store/lifecycle.h"
#include "store/reports.h"

/* Reports taken per look at the reports of one app and day waiting for
 * one image: every look reads all of them (store/reports.h), so they are
 * many. */
#define BATCH 4096
/* Arrivals looked at per claim, of which one is claimed: none waits out
 * its claim while another's reports move (a claim is renewed only during
 * its own). */
#define CANDIDATES 16
/* Seconds an arrival stays ours, renewed at every look at its reports:
 * another server takes it when ours died. */
#define ARRIVAL_LEASE_S 60
/* Seconds before an arrival some of whose reports another transaction
 * held is looked at again (by any server). */
#define ARRIVAL_RETRY_S 1

/* A look's reports, and where the next look starts. */
typedef struct candidates {
	st_candidate v[BATCH];
	size_t n;
	int64_t last_report;
} candidates;

static int add_candidate(void *cls, const st_candidate *cand)
{
	candidates *c = cls;
	c->last_report = cand->report;
	if (c->n < sizeof c->v / sizeof c->v[0])
		c->v[c->n++] = *cand;
	return 0;
}

/* A look at the reports of one app and day waiting for one image. */
typedef struct look_tx {
	candidates *c;
	st_wait_day at;
	int64_t after_report;
} look_tx;

static int look_cb(st_conn *c, void *cls)
{
	look_tx *t = cls;
	t->c->n = 0;
	return st_arrival_waits(c, t->at.uuid, t->at.app_id, t->at.day, t->after_report, BATCH,
				add_candidate, t->c);
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
	const st_candidate *cand; /* an empty uuid: any report (--all) */
	const srv_stored_form *form;
	st_report_meta now; /* the row as the transaction sees it */
	bool moved, busy, regrouped;
} move_tx;

static int move_cb(st_conn *c, void *cls)
{
	move_tx *t = cls;
	const st_candidate *cand = t->cand;
	t->moved = t->busy = false;
	int rc = st_report_lock(c, cand->app_id, cand->day, cand->report);
	t->busy = rc == 0; /* another instance has it, or it was purged */
	/* Moved meanwhile by another instance: once is all. */
	if (rc > 0 && cand->uuid[0])
		rc = st_report_waits_for(c, cand->app_id, cand->day, cand->uuid, cand->report);
	if (rc <= 0)
		return rc;
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
	old.duration_ms = t->now.duration_ms;
	st_group_ref fresh = old;
	fresh.key1 = f->s.grouping.key1;
	fresh.key2 = f->s.grouping.key2;
	fresh.frames1 = f->frames1;
	fresh.frames2 = f->frames2;
	st_document symbolized = srv_stored_symbolized(f);
	if ((rc = st_group_move(c, cand->app_id, cand->report, &old, &fresh)) < 0 ||
	    (rc = st_group_culprit_offer(c, cand->app_id, fresh.key1, fresh.key2, f->culprit)) <
		    0 ||
	    (rc = st_lifecycle_report_moved(c, cand->app_id, cand->report, old.key1, fresh.key1,
					    f->frames1, f->waits, t->now.app_version)) < 0 ||
	    (rc = st_report_update_symbols(c, cand->app_id, cand->day, cand->report,
					   f->s.grouping.key1, f->s.grouping.key2, f->pending,
					   &symbolized)) < 0 ||
	    (rc = st_report_waits_clear(c, cand->app_id, cand->day, cand->report)) < 0 ||
	    (rc = st_report_waits_add(c, cand->app_id, cand->report, cand->day, f->waits)) < 0)
		return rc;
	t->moved = true;
	t->regrouped = strcmp(old.key1, fresh.key1) || strcmp(old.key2, fresh.key2);
	return 1;
}

static int give_up_cb(st_conn *c, void *cls)
{
	const st_candidate *cand = cls;
	return st_report_waits_clear(c, cand->app_id, cand->day, cand->report);
}

/* One report: 1 moved, 0 nothing to do (*BUSY when another transaction
 * held it), negative st_status. *REGROUPED (may be NULL) tells whether
 * its keys changed. */
static int reprocess_one(const char *data_dir, const st_candidate *cand, bool *busy,
			 bool *regrouped)
{
	prepare_tx p = {.cand = cand};
	int rc = st_run_tx("reprocess_read", prepare_cb, &p);
	if (rc <= 0) {
		st_report_meta_clear(&p.meta);
		st_app_config_clear(&p.cfg);
		if (rc == 0) {
			/* Its day was purged: nothing left to wait for. */
			rc = st_run_tx("reprocess_give_up", give_up_cb, (void *)cand);
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
	/* An Android report is made again from its Matrix element. */
	bool matrix = p.meta.source && !strcmp(p.meta.source, "matrix");
	if ((matrix ? ing_parse_matrix_stored(p.meta.raw, strlen(p.meta.raw), &b, &err)
		    : ing_parse_native(p.meta.raw, strlen(p.meta.raw), NULL, NULL, &b, &err)) !=
		    0 ||
	    b->nentries != 1 || !b->entries[0].report) {
		/* Cannot happen for what we wrote; never retry it forever. */
		cm_log(CM_BUG, "report %lld: stored form unreadable: %s",
		       (long long)cand->report, b ? b->entries[0].error.message : err.message);
		result = st_run_tx("reprocess_give_up", give_up_cb, (void *)cand);
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
	*busy = *busy || m.busy;
	if (regrouped)
		*regrouped = m.moved && m.regrouped;
done:
	srv_stored_form_clear(&form);
	srv_symbol_set_free(set);
	ing_batch_free(b);
	st_report_meta_clear(&p.meta);
	st_app_config_clear(&p.cfg);
	return result;
}

/* Moves what C holds: adds to *DONE, sets *BUSY when a report was held
 * by another transaction. 0 or a negative st_status. */
static int move_all(const char *data_dir, const candidates *c, int64_t *done, bool *busy)
{
	for (size_t i = 0; i < c->n; i++) {
		int rc = reprocess_one(data_dir, &c->v[i], busy, NULL);
		if (rc < 0)
			return rc;
		*done += rc;
	}
	return 0;
}

static int recount_cb(st_conn *c, void *cls)
{
	(void)cls;
	return st_group_day_recount(c);
}

/* The group-days the moves left to recount (store/reports.h), one per
 * transaction: 0 when none is left, or a negative st_status. */
static int recount_moved(void)
{
	int rc;
	while ((rc = st_run_tx("reprocess_recount", recount_cb, NULL)) > 0)
		;
	return rc;
}

/* The background thread (srv_reprocess_start), whose stop ends
 * follow_day early; srv_reprocess_all runs without it. */
static srv_background bg = SRV_BACKGROUND_INIT;

typedef struct arrival_mark {
	int64_t id, lease_s;
	bool done;
} arrival_mark;

/* An arrival handled (deleted), or claimed for LEASE_S more seconds. */
static int mark_cb(st_conn *c, void *cls)
{
	const arrival_mark *m = cls;
	return m->done ? st_arrival_done(c, m->id) : st_arrival_renew(c, m->id, m->lease_s);
}

/* Moves the reports of AT in batches (adds to *DONE, sets *BUSY when one
 * was held by another transaction), keeping arrival CLAIM (0: none, the
 * sweep) claimed meanwhile: 1 when all were looked at, 0 when a stop was
 * asked, or a negative st_status. */
static int follow_day(const char *data_dir, candidates *c, const st_wait_day *at, int64_t claim,
		      int64_t *done, bool *busy)
{
	look_tx t = {.c = c, .at = *at};
	arrival_mark keep = {claim, ARRIVAL_LEASE_S, false};
	do {
		if (srv_background_stopping(&bg))
			return 0;
		int rc = claim ? st_run_tx("reprocess_arrival_mark", mark_cb, &keep) : 0;
		if (rc >= 0)
			rc = st_run_tx("reprocess_look", look_cb, &t);
		if (rc < 0 || (rc = move_all(data_dir, c, done, busy)) < 0)
			return rc;
		t.after_report = c->last_report;
	} while (c->n == BATCH);
	return 1;
}

/* The sweep finds the waits a stored file answers that no arrival moved
 * (the arrivals a server before issue 43 read past, or a file stored by
 * hand): from dsyms/missing's counters, so a server with nothing to
 * sweep reads those once when it takes the database-wide chores,
 * whatever the waiting reports. */
#define SWEEP_START                                                                                \
	{                                                                                          \
		0, "00000000-0000-0000-0000-000000000000", "-infinity"                             \
	}

static int sweep_next_cb(st_conn *c, void *cls)
{
	return st_sweep_next(c, cls);
}

/* One step of the sweep after *POS, which it advances: 1 when it moved
 * the reports of one app, image and day, 0 when none is left (or a stop
 * was asked), or a negative st_status. */
static int sweep_step(const char *data_dir, candidates *c, st_wait_day *pos, int64_t *done)
{
	int rc = st_run_tx("reprocess_sweep", sweep_next_cb, pos);
	if (rc <= 0)
		return rc;
	bool busy = false;
	return follow_day(data_dir, c, pos, 0, done, &busy);
}

int srv_reprocess_all(const char *data_dir, int64_t *out_done)
{
	int64_t done = 0;
	st_wait_day pos = SWEEP_START;
	candidates *c = malloc(sizeof *c);
	if (!c)
		return ST_HARD_ERROR;
	int rc;
	while ((rc = sweep_step(data_dir, c, &pos, &done)) > 0)
		;
	free(c);
	if (rc == 0)
		rc = recount_moved();
	if (out_done)
		*out_done = done;
	return rc < 0 ? rc : 0;
}

/* ---- every report (--all) --------------------------------------------------- */

typedef struct app_list {
	int64_t *v;
	size_t n, cap;
} app_list;

static int add_app(void *cls, int64_t app_id)
{
	app_list *l = cls;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		int64_t *v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = app_id;
	return 0;
}

static int apps_cb(st_conn *c, void *cls)
{
	((app_list *)cls)->n = 0;
	return st_app_ids(c, add_app, cls);
}

/* A page of one app's reports, after c->last_report of DAY. */
typedef struct page_tx {
	candidates *c;
	int64_t app_id;
	char day[11];
} page_tx;

static int page_cb(st_conn *c, void *cls)
{
	page_tx *t = cls;
	t->c->n = 0;
	return st_reports_after(c, t->app_id, t->day, t->c->last_report, BATCH, add_candidate,
				t->c);
}

/* One report, again while another transaction holds it (a server
 * reprocessing it now): 1 moved, 0 gone, or a negative st_status. */
static int reprocess_held(const char *data_dir, const st_candidate *cand, bool *regrouped)
{
	for (int tries = 0;; tries++) {
		bool busy = false;
		int rc = reprocess_one(data_dir, cand, &busy, regrouped);
		if (rc != 0 || !busy || tries == 100)
			return rc;
		struct timespec pause = {0, 10 * 1000 * 1000};
		nanosleep(&pause, NULL);
	}
}

/* Every report of APP_ID. 0 or a negative st_status. */
static int reprocess_app(const char *data_dir, int64_t app_id, candidates *c,
			 srv_reprocess_counts *counts)
{
	page_tx t = {.c = c, .app_id = app_id, .day = "-infinity"};
	c->last_report = 0;
	do {
		int rc = st_run_tx("reprocess_all_page", page_cb, &t);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < c->n; i++) {
			bool regrouped = false;
			if ((rc = reprocess_held(data_dir, &c->v[i], &regrouped)) < 0)
				return rc;
			counts->reprocessed += rc;
			counts->regrouped += regrouped;
		}
		if (c->n > 0)
			memcpy(t.day, c->v[c->n - 1].day, sizeof t.day);
	} while (c->n == BATCH);
	return 0;
}

int srv_reprocess_every_report(const char *data_dir, srv_reprocess_counts *out)
{
	memset(out, 0, sizeof *out);
	app_list apps = {0};
	candidates *c = malloc(sizeof *c);
	int rc = c ? st_run_tx("reprocess_all_apps", apps_cb, &apps) : ST_HARD_ERROR;
	for (size_t i = 0; rc >= 0 && i < apps.n; i++)
		rc = reprocess_app(data_dir, apps.v[i], c, out);
	if (rc >= 0)
		rc = recount_moved();
	free(c);
	free(apps.v);
	return rc < 0 ? rc : 0;
}

/* ---- the background thread ------------------------------------------------ */

static const srv_config *cfg; /* the background thread's, from start */

/* What the background thread has done; only it touches this. */
static struct {
	st_wait_day swept; /* the sweep's position */
	bool sweep_done;
	candidates c;
} run;

typedef struct arrival_days {
	const st_arrival *arrival;
	st_wait_day at;
} arrival_days;

static int next_day_cb(st_conn *c, void *cls)
{
	arrival_days *d = cls;
	return st_arrival_next_day(c, d->arrival, &d->at.app_id, d->at.day);
}

/* The reports waiting for A's UUID, day by day in batches: 1 all moved,
 * 0 some were held by another transaction or a stop was asked (look again
 * later), or a negative st_status. */
static int follow_arrival(const st_arrival *a, int64_t *done)
{
	arrival_days d = {.arrival = a, .at = {.day = "-infinity"}};
	memcpy(d.at.uuid, a->uuid, sizeof d.at.uuid);
	bool busy = false;
	int rc;
	while ((rc = st_run_tx("reprocess_arrival_day", next_day_cb, &d)) > 0)
		if ((rc = follow_day(cfg->data_dir, &run.c, &d.at, a->id, done, &busy)) <= 0)
			return rc;
	return rc < 0 ? rc : !busy;
}

/* Arrivals nobody works on, looked at per claim, and whether a file
 * stored for each can be read here. */
typedef struct unclaimed {
	st_arrival v[CANDIDATES];
	bool readable[CANDIDATES];
	size_t n;
	bool dropped; /* the last row's arrival did not fit */
} unclaimed;

static bool readable_here(const char *path)
{
	char full[4096];
	return (size_t)snprintf(full, sizeof full, "%s/%s", cfg->data_dir, path) < sizeof full &&
	       access(full, R_OK) == 0;
}

/* One row per arrival and file stored for its UUID (none: PATH NULL, and
 * nothing waits for the arrival but its own look, anywhere). */
static int add_unclaimed(void *cls, const st_arrival *a, const char *path)
{
	unclaimed *l = cls;
	if (l->n == 0 || l->v[l->n - 1].id != a->id) {
		l->dropped = l->n == CANDIDATES;
		if (l->dropped)
			return 0;
		l->v[l->n] = *a;
		l->readable[l->n++] = !path;
	}
	if (!l->dropped && path && readable_here(path))
		l->readable[l->n - 1] = true;
	return 0;
}

static int unclaimed_cb(st_conn *c, void *cls)
{
	unclaimed *l = cls;
	l->n = 0;
	l->dropped = false;
	return st_arrivals_unclaimed(c, CANDIDATES, add_unclaimed, l);
}

static int claim_cb(st_conn *c, void *cls)
{
	const arrival_mark *m = cls;
	return st_arrival_claim(c, m->id, m->lease_s);
}

/* Says, at most once a minute, that arrivals wait for a server that can
 * read their files: this one's data dir is not the others' (SPEC §12:
 * one data dir, shared), or a file was lost. */
static void note_unreadable(size_t n)
{
	static time_t last;
	time_t now = time(NULL);
	if (n && now - last >= 60) {
		last = now;
		cm_log(CM_WARN, "reprocessing: %zu arrivals have no file this server can read in %s "
				"(is the data dir shared with the other servers?); left to them",
		       n, cfg->data_dir);
	}
}

/* The oldest arrival nobody works on whose file this server can read,
 * claimed (SPEC §12: once between the servers, whenever its transaction
 * committed; a server without the file leaves it to one with it, or its
 * reports would move still waiting and the arrival be gone), deleted once
 * its reports moved, or released for another look (*AGAIN: soon) when
 * some were held by another transaction or a stop was asked. 1 when more
 * may be waiting, 0 not, or a negative st_status. */
static int follow_arrivals(int64_t *done, bool *again)
{
	unclaimed l;
	int rc = st_run_tx("reprocess_unclaimed", unclaimed_cb, &l);
	size_t unreadable = 0;
	for (size_t i = 0; rc >= 0 && i < l.n; i++) {
		arrival_mark m = {l.v[i].id, ARRIVAL_LEASE_S, false};
		if (!l.readable[i]) {
			unreadable++;
			continue;
		}
		/* 0: another server took it first. */
		if ((rc = st_run_tx("reprocess_arrival_claim", claim_cb, &m)) <= 0)
			continue;
		int moved = srv_background_stopping(&bg) ? 0 : follow_arrival(&l.v[i], done);
		if (moved < 0)
			return moved;
		/* A stop gives it back at once, to whoever looks next. */
		m.lease_s = srv_background_stopping(&bg) ? 0 : ARRIVAL_RETRY_S;
		m.done = moved == 1;
		*again = *again || moved == 0;
		rc = st_run_tx("reprocess_arrival_mark", mark_cb, &m);
		return rc < 0 ? rc : 1;
	}
	note_unreadable(unreadable);
	return rc < 0 ? rc : 0;
}

/* Arrivals first, then a step of the sweep left from the start (by the
 * server holding the database-wide chores), then the recounts the moves
 * left; with nothing arriving only the claim of no arrival and the read
 * of the (empty) recounts remain, whatever the number of waiting
 * reports. */
static int pass(void *cls)
{
	(void)cls;
	int64_t done = 0;
	bool again = false;
	int rc = follow_arrivals(&done, &again);
	bool more = rc > 0;
	if (rc >= 0 && !run.sweep_done && srv_lease_take(ST_LEASE_COORDINATOR, 0)) {
		rc = sweep_step(cfg->data_dir, &run.c, &run.swept, &done);
		run.sweep_done = rc == 0;
		more = more || rc > 0;
	}
	if (rc >= 0)
		rc = recount_moved();
	srv_metrics_reprocessed((uint64_t)done);
	if (rc < 0)
		cm_log(CM_WARN, "reprocessing: database unavailable, retrying later");
	else if (done)
		cm_log(CM_INFO, "reprocessed %lld reports whose symbols arrived", (long long)done);
	if (rc < 0)
		return (int)cfg->reprocess_interval;
	/* A report another instance held: it is likely done in a moment. */
	return more ? 0 : again ? 1 : (int)cfg->reprocess_interval;
}

/* ---- the listening thread ------------------------------------------------- */

static pthread_t listener;
static atomic_bool listening;

/* Wakes the reprocessor at every NOTIFY and after every (re)connection:
 * what was announced while it did not listen is in the arrivals table,
 * which the pass reads. */
static void *listen_loop(void *arg)
{
	(void)arg;
	st_listener *l = NULL;
	while (atomic_load(&listening)) {
		if (!l) {
			if (!(l = st_listener_open(ST_ARRIVALS_CHANNEL))) {
				struct timespec second = {1, 0};
				nanosleep(&second, NULL);
				continue;
			}
			srv_reprocess_wake();
		}
		int rc = st_listener_wait(l, 1000);
		if (rc < 0) {
			cm_log(CM_WARN, "reprocessing: lost the database's notifications, "
					"listening again");
			st_listener_close(l);
			l = NULL;
		}
		if (rc != 0)
			srv_reprocess_wake();
	}
	st_listener_close(l);
	return NULL;
}

int srv_reprocess_start(const srv_config *config)
{
	cfg = config;
	run.swept = (st_wait_day)SWEEP_START;
	atomic_store(&listening, true);
	if (pthread_create(&listener, NULL, listen_loop, NULL) != 0) {
		atomic_store(&listening, false);
		return -1;
	}
	return srv_background_start(&bg, pass, NULL);
}

void srv_reprocess_wake(void)
{
	srv_background_wake(&bg);
}

void srv_reprocess_stop(void)
{
	if (atomic_exchange(&listening, false))
		pthread_join(listener, NULL);
	srv_background_stop(&bg);
}
