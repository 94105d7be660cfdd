/*
 * dsym_import.h — turning one uploaded body (raw Mach-O or zip of dSYMs)
 * into debug files: every slice's symcache and kept copy in the data dir,
 * then the rows, all committed in one transaction (SPEC §3.1, §7, §8).
 *
 * Rules: every file is parsed before anything is written, so a bad file
 * refuses the whole upload; a slice already stored is not rebuilt
 * (idempotent re-upload); a slice with DWARF replaces a stored one without,
 * never the reverse. Files are written and renamed into place before the
 * commit and removed again when it fails; files of a replaced row are
 * removed after it.
 *
 * With SYSTEM set the slices go to the instance's system symbols
 * (schema/014, `stallscope system-symbols import`) instead of an app's
 * debug files, under the same rules, keeping only their symcaches.
 *
 * Runs on a worker thread (it parses DWARF and writes files); it touches
 * nothing but its srv_dsym_import.
 */
#ifndef STALLSCOPE_SERVER_DSYM_IMPORT_H
#define STALLSCOPE_SERVER_DSYM_IMPORT_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>

#include "common/errors.h"
#include "server/service/config.h"
#include "store/store.h"

typedef struct srv_dsym_import {
	/* In. */
	const srv_config *cfg;
	bool system; /* the system symbols; APP is not used */
	st_app app;
	char body_path[PATH_MAX];
	char name[ST_NAME_MAX + 1]; /* for a raw Mach-O body (sanitized) */
	/* Out. */
	cm_err err; /* ERR_NONE, or the error to reply with msg */
	char msg[512];
	bool created;  /* a slice was added or upgraded: 201, else 200 */
	json_t *files; /* {"uuid","arch","name","kind","has_dwarf",
			  "functions","status"} per slice; owned */
} srv_dsym_import;

/* Does the import described by JOB's inputs and fills its outputs. */
void srv_dsym_import_run(srv_dsym_import *job);

/*
 * Copies NAME into OUT (ST_NAME_MAX + 1 bytes) keeping only characters
 * safe in a file name; "debug-file" when nothing usable remains.
 */
void srv_dsym_sanitize_name(const char *name, char *out);

#endif
