/*
 * report_lists.h — lists of reports beside a group's own page (groups.h):
 * a user's reports (SPEC §10.7) and whether a level-2 group exists under
 * its level-1 key, which the group's reports page answers 404 without.
 * Same conventions as groups.h: JSON built by PostgreSQL, one malloc'ed
 * string in *OUT_JSON (caller frees); 1 with it, 0 with nothing, or a
 * negative st_status.
 */
#ifndef STALLSCOPE_STORE_REPORT_LISTS_H
#define STALLSCOPE_STORE_REPORT_LISTS_H

#include <stdint.h>

#include "store/store.h"

/*
 * A page of the reports of APP_ID sent by USER_ID on the days FROM … TO
 * (NULL: unbounded), newest first, after (AFTER_US, AFTER_ID) (AFTER_ID 0
 * for the first page), at most LIMIT: a JSON array of report summaries as
 * st_group_reports_page writes them, each with its keys and a "cursor".
 * From reports_user_idx (schema/046).
 */
int st_user_reports_page(st_conn *c, int64_t app_id, const char *user_id, const char *from,
			 const char *to, int64_t after_us, int64_t after_id, int64_t limit,
			 char **out_json);

/* 1 when APP_ID has a level-2 group KEY2 whose level-1 group is KEY1, 0
 * when not, or a negative st_status. */
int st_group2_exists(st_conn *c, int64_t app_id, const char *key1, const char *key2);

#endif
