/*
 * symbols.h — which symcache serves each image of a batch of reports, for
 * ingest, reprocessing and traces.
 *
 * A symbol set is made per request: which debug files the app has, and
 * which system symbols the instance has (schema/014), for every UUID the
 * reports name — remembered for two seconds per UUID, else
 * one query for all the UUIDs not remembered — and their symcaches opened
 * through the process-wide LRU (ingest/symcache_lru.h). An upload or
 * delete in this process is seen by the next request (srv_symbols_forget);
 * one in another instance within the two seconds, and the reports stored
 * meanwhile wait for it like any report with a missing dSYM, so the
 * reprocessor moves them.
 *
 * Memory: a set holds references into the LRU until srv_symbol_set_free.
 */
#ifndef STALLSCOPE_SERVER_SYMBOLS_H
#define STALLSCOPE_SERVER_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/symbolicate.h"
#include "ingest/symcache_lru.h"

/* Opens the process-wide LRU of CAPACITY symcaches. 0, or -1 (ENOMEM). */
int srv_symbols_init(size_t capacity);
void srv_symbols_free(void);
void srv_symbols_stats(ing_lru_stats *out);

typedef struct srv_symbol_set srv_symbol_set;

/*
 * The debug files of APP_ID for the images of REPORTS (N of them), under
 * DATA_DIR; FRESH asks the database about every UUID (the reprocessor,
 * which acts on what the database says arrived). Returns 0 with *OUT, or
 * a negative st_status (the database).
 */
int srv_symbol_set_load(const char *data_dir, int64_t app_id,
			const ing_report *const *reports, size_t n, bool fresh,
			srv_symbol_set **out);

/* After a debug file was committed or deleted: what is remembered is stale. */
void srv_symbols_forget(void);

/* Fills OUT[i] for every image i of R (matched by UUID, the app's upload
 * before the system symbols, arch breaking ties): found with its cache,
 * missing, or malformed (a file that cannot be opened). */
void srv_symbol_set_images(srv_symbol_set *set, const ing_report *r,
			   ing_image_symbols *out);

void srv_symbol_set_free(srv_symbol_set *set);

#endif
