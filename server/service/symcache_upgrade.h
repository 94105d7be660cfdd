/*
 * symcache_upgrade.h — a symcache written by an older format version
 * (SYM_CACHE_VERSION, docs/SYMCACHE.md "Versioning") is never served: the
 * first time a report needs it, it is rebuilt from the slice its upload
 * kept, under a new name; the debug file's row is pointed at it and the
 * old file removed.
 *
 * Instances race safely: each builds under a name of its own, and only the
 * one whose update still finds the old path in the row wins; the others
 * remove what they built and take the row's path. Within one process the
 * rebuilds are serialized, so a popular file is built once.
 */
#ifndef STALLSCOPE_SERVER_SYMCACHE_UPGRADE_H
#define STALLSCOPE_SERVER_SYMCACHE_UPGRADE_H

#include <stdint.h>

#include "store/reports.h"

/*
 * Makes F (a row of APP_ID's debug files as st_symbol_files gave it) name
 * a current symcache under DATA_DIR: on return with 1, F->symcache_path
 * and F->symcache_version are the current ones (the caller forgets what
 * it remembered of the old path: srv_symbols_forget). Returns 1, 0 when F cannot
 * be made current (a system symbol, which keeps no copy; a kept slice that
 * is gone or unreadable; the row deleted meanwhile: logged), or a negative
 * st_status when the database failed.
 */
int srv_symcache_upgrade(const char *data_dir, int64_t app_id, st_symbol_file *f);

#endif
