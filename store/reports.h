/*
 * reports.h — storage of reports, their groups and the upload policy
 * (schema/002_ingest.sql, 003_ingest_functions.sql; the design is
 * docs/STORAGE.md). Same conventions as store.h: functions run inside a
 * st_run_tx (or st_run_autocommit) callback on its connection;
 * negative = failure (ST_SOFT_ERROR / ST_HARD_ERROR), 0 = no row, positive
 * = rows. Days are "YYYY-MM-DD" (UTC), timestamps RFC 3339 strings.
 *
 * Memory: output structs are filled by copy; strings marked (malloc) in an
 * output struct belong to the caller, who frees them.
 */
#ifndef STALLSCOPE_STORE_REPORTS_H
#define STALLSCOPE_STORE_REPORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/jsonw.h"
#include "store/store.h"

/* ---- Policy --------------------------------------------------------------- */

typedef struct st_app_config {
	double sample_rate;
	int64_t daily_quota;
	int64_t retention_days;
	char *grouping_rules; /* (malloc) JSON {"skip_images":[…],"skip_prefixes":[…]} */
	int64_t version;      /* bumped by every change (st_report_ingest checks it) */
} st_app_config;

/* The policy of APP_ID: its row, or the defaults when it has none. 1. */
int st_config_get(st_conn *c, int64_t app_id, st_app_config *out);

/* Changes the fields whose HAS_* flag is set, creating the row if needed. */
typedef struct st_config_update {
	bool has_sample_rate, has_daily_quota, has_retention_days, has_grouping_rules;
	double sample_rate;
	int64_t daily_quota, retention_days;
	const char *grouping_rules; /* JSON text */
} st_config_update;
int st_config_update_apply(st_conn *c, int64_t app_id, const st_config_update *u);

void st_app_config_clear(st_app_config *cfg);

typedef struct st_whitelist_entry {
	char user_id[4097];
	char note[4097]; /* "" with has_note false for NULL */
	bool has_note;
	char expires_at[40]; /* "" when it never expires */
	char created_at[40];
} st_whitelist_entry;

typedef int (*st_whitelist_cb)(void *cls, const st_whitelist_entry *e);
/* Adds or replaces an entry (NOTE, EXPIRES_AT may be NULL; a replaced
 * entry keeps its created_at) and hands the stored entry to CB. 1. */
int st_whitelist_put(st_conn *c, int64_t app_id, const char *user_id, const char *note,
		     const char *expires_at, st_whitelist_cb cb, void *cls);
/* 1 deleted, 0 none. */
int st_whitelist_delete(st_conn *c, int64_t app_id, const char *user_id);
/* 1 when the whitelist holds USER_ID of APP_ID at AT (RFC 3339), else 0. */
int st_whitelist_holds(st_conn *c, int64_t app_id, const char *user_id, const char *at);
/* Entries in user_id order after AFTER ("" for the first page), at most
 * LIMIT; returns how many. */
int st_whitelist_list(st_conn *c, int64_t app_id, const char *after, int64_t limit,
		      st_whitelist_cb cb, void *cls);

/* ---- Reports ---------------------------------------------------------------- */

/* Creates the partition of APP_ID and DAY if missing. */
int st_report_partition_ensure(st_conn *c, int64_t app_id, const char *day);

/*
 * A document stored with a report: its JSON TEXT (LEN bytes) and the
 * spans of it, in order and not overlapping, that are stacks — what many
 * reports share, kept once per app (schema/018: the stacks table) and
 * referred to by the report. Nothing is owned.
 */
typedef struct st_document {
	const char *text;
	size_t len;
	const cm_span *stacks;
	size_t nstacks;
} st_document;

/* A symbolized report and the policy that decides whether it is kept. */
typedef struct st_new_report {
	const char *received_day, *received_at;
	bool sampled;           /* ing_sampled for this user and day, */
	int64_t config_version; /* under the policy of this version */
	const char *report_id, *user_id, *kind, *source;
	const char *app_version, *build, *os, *os_version, *os_build, *device;
	const char *client_timestamp; /* NULL when unknown */
	int64_t duration_ms;          /* -1 when unknown */
	const char *key1, *key2;
	const char *frames1, *frames2; /* JSON arrays of both levels' identities */
	bool pending;
	const char *waits;      /* JSON array, as st_report_waits_add takes */
	const char *culprit;	/* JSON {"frame","function","file","line"}; NULL: none */
	st_document raw;	/* the report in native v1 form */
	st_document symbolized; /* images, threads, stack */
} st_new_report;

typedef enum st_ingest_outcome {
	ST_INGEST_STORED,
	ST_INGEST_DUPLICATE,   /* a resend: *ID is the first report's, nothing changed */
	ST_INGEST_NOT_SAMPLED, /* neither sampled today nor whitelisted */
	ST_INGEST_QUOTA,       /* the user's quota for the day is used up */
	ST_INGEST_STALE,       /* the policy changed since CONFIG_VERSION: nothing stored */
} st_ingest_outcome;

/*
 * Stores the N reports ROWS of APP_ID, all made under the same
 * config_version, as one statement (schema/010: ingest_reports): per
 * report the idempotency key, whitelist, sampling and quota, the row in its
 * day partition, its waits and both groups' counters. Returns N with
 * OUTCOMES[i] (and IDS[i] for stored and duplicate) per report, or a
 * negative st_status for the whole batch. Safe to run without st_run_tx's
 * BEGIN: the statement is a transaction of its own, so a failure stores
 * none of them.
 */
int st_report_ingest(st_conn *c, int64_t app_id, const st_new_report *const *rows, size_t n,
		     st_ingest_outcome *outcomes, int64_t *ids);

/*
 * The same through a pipeline (store.h: st_pipe), so the database finds
 * the next batch waiting when it commits one: st_report_ingest_pipeline
 * runs CB with a pipeline for ingest_reports; in it, st_report_ingest_send
 * sends a batch (0 or a negative st_status) and st_report_ingest_recv
 * reads the answer to the oldest batch sent, of N reports, as
 * st_report_ingest returns it. ROWS are only read during the send.
 */
int st_report_ingest_pipeline(st_pipe_cb cb, void *cls);
int st_report_ingest_send(st_pipe *p, int64_t app_id, const st_new_report *const *rows, size_t n);
int st_report_ingest_recv(st_pipe *p, size_t n, st_ingest_outcome *outcomes, int64_t *ids);

/* Replaces the symbolization of report ID (reprocessing): its stacks
 * through the same sharing as at ingest, the ones no report refers to any
 * more collected. */
int st_report_update_symbols(st_conn *c, int64_t app_id, const char *day, int64_t id,
			     const char *key1, const char *key2, bool pending,
			     const st_document *symbolized);

/*
 * What counting a report into its groups needs: the keys and identities of
 * both levels plus the dimensions of group_daily.
 */
typedef struct st_group_ref {
	const char *key1, *key2;
	const char *frames1, *frames2; /* JSON arrays of identities */
	const char *user_id, *day, *at;
	const char *app_version, *os_version, *device, *kind; /* NULL → "" */
	const char *duration_ms;			      /* decimal text, NULL when unknown */
} st_group_ref;

/*
 * Moves report REPORT from the groups of FROM (its keys only) to those of
 * TO (keys, identities and the report's dimensions and duration, which
 * both share): groups.reports and .users, the day rows (or the report's
 * delta while it waits, schema/026), first/last seen and the durations
 * (schema/021) grow on the new ones (schema/013: move_report, in the lock
 * order ingest_reports keeps).
 */
int st_group_move(st_conn *c, int64_t app_id, int64_t report, const st_group_ref *from,
		  const st_group_ref *to);

/* Offers CULPRIT (JSON as st_new_report's; NULL changes nothing) to the
 * groups KEY1 and KEY2 of APP_ID, which keep the better one (schema/022:
 * better_culprit). After st_group_move, in its transaction. */
int st_group_culprit_offer(st_conn *c, int64_t app_id, const char *key1, const char *key2,
			   const char *culprit);

/* Recounts the users and bounds of one group-day that reprocessing moved
 * reports out of in numbers (schema/016: group_day_recounts): 1 when one
 * was recounted, 0 when none waits, or a negative st_status. Call it
 * after the moves, each in its own transaction, until 0. */
int st_group_day_recount(st_conn *c);

/* ---- Debug files for symbolization ---------------------------------------------- */

typedef struct st_symbol_file {
	char uuid[37];  /* uppercase 8-4-4-4-12 */
	char arch[16];
	bool has_dwarf;
	bool system;		 /* a system symbol, not an app upload */
	char symcache_path[512]; /* relative to the data dir */
	int64_t symcache_version;
	char debug_path[512]; /* the kept slice it was built from; "" for a
				 system symbol, which keeps none */
} st_symbol_file;

typedef int (*st_symbol_file_cb)(void *cls, const st_symbol_file *f);

/* Every debug file of APP_ID and every system symbol file whose UUID is in
 * UUIDS, a PostgreSQL array literal ("{UUID,UUID}"). Returns how many. */
int st_symbol_files(st_conn *c, int64_t app_id, const char *uuids,
		    st_symbol_file_cb cb, void *cls);

/* ---- Waiting for symbols ---------------------------------------------------------- */

/* Adds the images report ID (received DAY) waits for to its row
 * (reports.waits, schema/030): WAITS is a JSON array of {"uuid",
 * "image_name", "arch" (or null), "reason"}, reason one of "missing",
 * "malformed", "symbol_table", and for a system image "system_missing",
 * "system_malformed". */
int st_report_waits_add(st_conn *c, int64_t app_id, int64_t report, const char *day,
			const char *waits);
/* Forgets every wait of report ID of APP_ID received on DAY (and counts
 * them out of image_waits). */
int st_report_waits_clear(st_conn *c, int64_t app_id, const char *day, int64_t report);

/* ---- Reprocessing ------------------------------------------------------------------ */

/* The channel st_arrivals_record notifies (LISTEN through st_listen_open). */
#define ST_ARRIVALS_CHANNEL "stallscope_arrivals"

/*
 * Records, in the caller's transaction, that debug files of APP_ID (0:
 * system symbol files, for every app) with the UUIDS (a PostgreSQL array
 * literal, "{UUID,UUID}") were stored, and notifies ST_ARRIVALS_CHANNEL at
 * the commit. Takes the images' locks first, which waits for the
 * transactions storing reports that find one of them missing: every wait
 * is then either visible to whoever reads the arrival, or stored after
 * the file by a transaction that records an arrival of its own
 * (ingest_reports, add_report_waits).
 */
int st_arrivals_record(st_conn *c, int64_t app_id, const char *uuids);

typedef struct st_arrival {
	int64_t id;
	int64_t app_id; /* 0: a system symbol file, every app's reports */
	char uuid[37];
} st_arrival;

/* The oldest LIMIT arrivals nobody works on (unclaimed, or whose claim
 * ran out), one row per symcache stored for the UUID (the app's debug
 * files and the system symbol files; PATH relative to the data dir, NULL
 * when none is stored), in arrival order: how many rows, each given to
 * CB, or a negative st_status. Reads only: st_arrival_claim takes one. */
typedef int (*st_arrival_file_cb)(void *cls, const st_arrival *a, const char *path);
int st_arrivals_unclaimed(st_conn *c, int64_t limit, st_arrival_file_cb cb, void *cls);

/* Claims arrival ID for LEASE_S seconds when nobody works on it: 1, 0
 * when another server took it first, or a negative st_status. Commit
 * before working on it. */
int st_arrival_claim(st_conn *c, int64_t id, int64_t lease_s);

/* Claims arrival ID for LEASE_S more seconds from now: to keep it while
 * its reports move, or, with a short LEASE_S, to look at it again then
 * (some of its reports were held by another transaction). */
int st_arrival_renew(st_conn *c, int64_t id, int64_t lease_s);

/* Arrival ID is handled: its reports moved. */
int st_arrival_done(st_conn *c, int64_t id);

/* A report that may have something to reprocess: it waits for UUID. */
typedef struct st_candidate {
	int64_t report, app_id;
	char day[11];
	char uuid[37];
} st_candidate;

typedef int (*st_candidate_cb)(void *cls, const st_candidate *c);

/*
 * The next day with reports waiting for A's UUID — in A's app, or in every
 * app for a system file — after (*APP_ID, DAY) in (app, day) order, from
 * dsyms/missing's counters (image_waits): 1 with *APP_ID and DAY
 * ("YYYY-MM-DD", 11 bytes) set, 0 when there is none. Start with *APP_ID 0
 * and DAY "-infinity".
 */
int st_arrival_next_day(st_conn *c, const st_arrival *a, int64_t *app_id, char *day);

/*
 * The reports of APP_ID received on DAY that wait for UUID, with an id
 * above AFTER_REPORT, in id order, at most LIMIT; through the day
 * partition's index on reports.waits. Every call reads all of the day's
 * waiting reports: take large batches. Returns how many.
 */
int st_arrival_waits(st_conn *c, const char *uuid, int64_t app_id, const char *day,
		     int64_t after_report, int64_t limit, st_candidate_cb cb, void *cls);

/*
 * Every report of APP_ID after (DAY, AFTER_REPORT) in (received day, id)
 * order, at most LIMIT, as candidates with an empty uuid (`stallscope
 * reprocess --all`). Start from day "-infinity" and report 0. Returns how
 * many.
 */
int st_reports_after(st_conn *c, int64_t app_id, const char *day, int64_t after_report,
		     int64_t limit, st_candidate_cb cb, void *cls);

/* Reports of one app and day waiting for one image. */
typedef struct st_wait_day {
	int64_t app_id;
	char uuid[37];
	char day[11];
} st_wait_day;

/*
 * The safety sweep: the next (app, image, day) after *POS, in that order,
 * whose waiting reports a stored file now answers (a file for a missing
 * image; DWARF where the file serving it has only a symbol table), from
 * dsyms/missing's counters (image_waits): 1 with *POS set to it, 0 when
 * there is none. Start from app 0, the nil UUID and day "-infinity"; the
 * reports are then read as an arrival's (st_arrival_waits).
 */
int st_sweep_next(st_conn *c, st_wait_day *pos);

/* 1 when report REPORT of APP_ID, received on DAY, still waits for UUID,
 * else 0. */
int st_report_waits_for(st_conn *c, int64_t app_id, const char *day, const char *uuid,
			int64_t report);

/* What reprocessing needs of a stored report; strings owned by the struct
 * (st_report_meta_clear). DURATION_MS is its decimal text, NULL when
 * unknown. */
typedef struct st_report_meta {
	char *raw, *key1, *key2, *user_id, *kind, *app_version, *os_version, *device, *received_at,
		*source, *os_build, *client_timestamp, *duration_ms;
} st_report_meta;

/* 1 with *OUT, or 0 when the report is gone. */
int st_report_meta_get(st_conn *c, int64_t app_id, const char *day, int64_t id,
		       st_report_meta *out);
void st_report_meta_clear(st_report_meta *m);

/* Locks the row of report ID (of APP_ID, received on DAY) until the
 * transaction ends: 1, or 0 when another transaction holds it (or it is
 * gone). */
int st_report_lock(st_conn *c, int64_t app_id, const char *day, int64_t id);

/* ---- Retention ----------------------------------------------------------------------- */

/* Calls CB with the id of every app; returns how many. */
typedef int (*st_app_id_cb)(void *cls, int64_t app_id);
int st_app_ids(st_conn *c, st_app_id_cb cb, void *cls);

/* Drops APP_ID's report partitions of days before BEFORE_DAY and the index
 * rows (report_keys, user_quota, image_waits) and the Android measures
 * (st_measures_purge) of those days; returns the
 * number of partitions dropped. Group counters stay. */
int st_reports_purge(st_conn *c, int64_t app_id, const char *before_day);

#endif
