/*
 * folded_read.h — the dashboard's reads of what the fold counts (the
 * groups' counters, the day, dimension and facet rows, the call tree, the
 * pick lists, the lifecycle events), and how current each answer is
 * (SPEC §12, docs/SERVER.md "Read replica").
 *
 * With STALLSCOPE_READ_DATABASE_URL set such a read runs on the replica and
 * writes nothing: it counts what the primary's folds counted. Without one,
 * or while it is down, it runs on the primary after folding its app's
 * deltas, so a single server answers every report committed before the
 * request. Either way the answer comes with "as_of": the time up to which
 * it counts every report committed (store/groups.h st_folded_as_of).
 *
 * Memory: nothing is kept between calls; AS_OF is the caller's.
 */
#ifndef STALLSCOPE_SERVER_FOLDED_READ_H
#define STALLSCOPE_SERVER_FOLDED_READ_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Room for an as_of text, "YYYY-MM-DDTHH:MM:SSZ" and its NUL. */
#define SRV_AS_OF_LEN 32

/*
 * Runs CB(c, CLS) in a transaction, NAME labelling it: on the read replica
 * when one is set up, else, or when that failed in any way, on the
 * primary after folding APP_ID's deltas. AS_OF (SRV_AS_OF_LEN bytes) gets the answer's as_of, ""
 * when unknown (nothing folded yet while deltas wait). Returns what CB
 * returned, or a negative st_status. CB may run more than once (as with
 * st_run_tx): it must keep nothing from a failed attempt.
 */
int srv_read_folded(int64_t app_id, const char *name, st_tx_cb cb, void *cls, char *as_of);

/* Sets BODY's (an object's) "as_of" to AS_OF, null when "". Returns BODY. */
json_t *srv_with_as_of(json_t *body, const char *as_of);

/* The same on JSON text JSON (malloc'ed, taken): the new text (malloc'ed),
 * or NULL when JSON is not an object or memory ran out. */
char *srv_json_text_with_as_of(char *json, const char *as_of);

#endif
