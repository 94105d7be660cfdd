/*
 * mapping_import.h — one uploaded methodMapping.txt (SPEC §13) turned into
 * a method table in the data dir and its debug_files row, committed with
 * an arrival so the reports waiting for it move (docs/ANDROID.md).
 *
 * A mapping belongs to one (app version, build): Matrix numbers methods
 * anew in every build. It is stored as a debug file of arch "java" under
 * the UUID ingest/matrix.h derives from the pair, beside the kept text.
 * The same text again changes nothing (200); another text for the same
 * build replaces the table (201), as a better dSYM would.
 *
 * Runs on a worker thread (it parses the whole file); it touches nothing
 * but its srv_mapping_import.
 */
#ifndef STALLSCOPE_SERVER_MAPPING_IMPORT_H
#define STALLSCOPE_SERVER_MAPPING_IMPORT_H

#include <limits.h>
#include <stdbool.h>

#include "common/errors.h"
#include "server/service/config.h"
#include "store/store.h"

typedef struct srv_mapping_import {
	/* In. */
	const srv_config *cfg;
	st_app app;
	char body_path[PATH_MAX]; /* the streamed body: plain or gzip text */
	char app_version[ST_NAME_MAX + 1];
	char build[ST_NAME_MAX + 1];
	/* Out. */
	cm_err err; /* ERR_NONE, or the error to reply with msg */
	char msg[512];
	bool created;	       /* stored or replaced: 201, else 200 */
	st_debug_file stored;  /* the row as it stands after the upload */
	size_t lines, skipped; /* of the text, when it was converted */
} srv_mapping_import;

/* Does the import described by JOB's inputs and fills its outputs. */
void srv_mapping_import_run(srv_mapping_import *job);

#endif
