/*
 * stored_form.h — what ingest (server/api/ingest/ingest.c) and reprocessing
 * (reprocess.c) share: symbolizing a report into the JSON stored with it,
 * its group identities and its waits, and the app's grouping rules.
 */
#ifndef STALLSCOPE_SERVER_STORED_FORM_H
#define STALLSCOPE_SERVER_STORED_FORM_H

#include "ingest/parse.h"
#include "server/service/symbols.h"
#include "store/reports.h"

/*
 * A report symbolized for storage: the JSON texts (malloc) and, pointing
 * into them or into the arena, what counting it into groups needs.
 */
typedef struct srv_stored_form {
	/* The report's stacks in native v1 form (ING_NATIVE_STACKS): its
	 * identity and metadata are the row's columns. */
	char *raw;
	/* {"images","threads","stack"}; a stack with "thread" has no
	 * "frames". The group frames are the level-2 group's. */
	char *symbolized;
	size_t raw_len, symbolized_len;
	/* The stacks of both (st_document), each the images array and every
	 * thread (arena; as many as the report has threads, plus one). */
	cm_span *raw_stacks, *symbolized_stacks;
	size_t nstacks;
	char *frames1, *frames2; /* identities of both levels, JSON arrays */
	char *waits;             /* the images it waits for, as st_report_waits_add takes */
	char *culprit;		 /* ing_culprit as JSON (SPEC §10.5); NULL when none */
	ing_symbolized s;
	ing_image_symbols *images; /* arena */
	bool pending;
} srv_stored_form;

/*
 * Symbolizes R with the files of SET and the app's grouping RULES (NULL =
 * none) into OUT, sharing lookups with earlier reports through MEMO (NULL
 * = none; see ing_memo for what a shared memo asks of ARENA and SET).
 * Returns 0, or -1 when out of memory.
 */
int srv_stored_form_make(srv_symbol_set *set, const ing_report *r,
			 const ing_group_rules *rules, ing_memo *memo, ing_arena *arena,
			 srv_stored_form *out);
void srv_stored_form_clear(srv_stored_form *f);

/* F's two documents as the store takes them; they point into F. */
st_document srv_stored_raw(const srv_stored_form *f);
st_document srv_stored_symbolized(const srv_stored_form *f);

/*
 * The app's grouping rules from their JSON (app_config.grouping_rules),
 * copied into ARENA. Returns 0 (unreadable rules count as none) or -1 on
 * memory exhaustion.
 */
int srv_grouping_rules(const char *json, ing_arena *arena, ing_group_rules *out);

#endif
