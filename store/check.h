/*
 * check.h — `stallscope check`: the equalities the storage relies on
 * (docs/STORAGE.md), each read by one set-based statement, all of them in
 * one read-only snapshot, so a check never writes and can run on a
 * replica, and concurrent ingest, folds, moves and purges (each one
 * transaction) are seen either whole or not at all.
 *
 * Memory: every string handed to a callback is borrowed for the call.
 */
#ifndef STALLSCOPE_STORE_CHECK_H
#define STALLSCOPE_STORE_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

/* One disagreement, or one note (not a disagreement: something the
 * storage will put right by itself, such as partitions retention has yet
 * to drop). NULL members do not apply. */
typedef struct st_check_row {
	const char *check;	 /* the equality's name */
	const char *expected_as; /* what EXPECTED was counted from */
	const char *found_as;	 /* what FOUND was read from */
	bool note;
	const char *app; /* bundle id */
	int64_t level;	 /* 1 or 2; 0 when none */
	const char *key; /* group key */
	const char *day; /* YYYY-MM-DD */
	const char *detail;
	const char *expected;
	const char *found;
} st_check_row;

typedef struct st_check_sink {
	/* Each attempt of the snapshot (a lost connection or a replica's
	 * recovery conflict retries it): forget what an earlier one said. */
	void (*restart)(void *cls);
	void (*row)(void *cls, const st_check_row *row);
	/* After each equality: its name and how many rows disagreed. */
	void (*done)(void *cls, const char *check, int64_t disagreements);
	void *cls;
} st_check_sink;

/*
 * Runs every equality over APP_ID's rows (0: every app's), in one
 * REPEATABLE READ READ ONLY transaction that first takes ACCESS SHARE on
 * `reports` (so no partition is made or dropped while it reads). Returns
 * the number of disagreements (notes not counted), or a negative
 * st_status.
 */
int st_check_run(int64_t app_id, const st_check_sink *sink);

/* The id of the app BUNDLE_ID into *OUT_ID: 1, 0 when there is none, or a
 * negative st_status. */
int st_check_app_id(const char *bundle_id, int64_t *out_id);

#endif
