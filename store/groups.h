/*
 * groups.h — reading groups and reports for the API (docs/STORAGE.md,
 * §Reading). Each function hands back the JSON the API returns, built by
 * PostgreSQL, as one malloc'ed string (*OUT_JSON, caller frees); returns
 * 1 with it, 0 when there is nothing (*OUT_JSON NULL), or a negative
 * st_status.
 */
#ifndef STALLSCOPE_STORE_GROUPS_H
#define STALLSCOPE_STORE_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

/* Optional filters of the group list, a group's detail and its reports;
 * NULL fields do not filter, "" matches reports without the field. */
typedef struct st_group_filter {
	const char *from, *to; /* UTC days, inclusive */
	const char *version, *os_version, *device, *kind;
	/* The list only: an ILIKE pattern its groups' search terms must match
	 * (schema/046, SPEC §10.7); NULL for any. */
	const char *search;
} st_group_filter;

typedef enum st_group_sort {
	ST_SORT_COUNT,
	ST_SORT_USERS,
	ST_SORT_LAST_SEEN,
	ST_SORT_STALL_MS, /* summed durations (SPEC §10.1) */
} st_group_sort;

/* Counts the waiting deltas of APP_ID into the
 * day, dimension and facet rows (schema/026: fold_group_deltas), in one
 * statement: the readers of those rows call it first. Returns how many
 * reports it counted, or a negative st_status. */
int64_t st_group_deltas_fold(st_conn *c, int64_t app_id);

/*
 * The time up to which APP_ID's folded counts, as C's transaction reads
 * them, count every report committed ("YYYY-MM-DDTHH:MM:SSZ" into OUT, CAP
 * bytes): with none of the app's deltas waiting, the moment the
 * transaction read (a replica's last replayed commit, the primary's
 * transaction start); otherwise the start of the last fold that counted
 * some (schema/048's fold_clocks). Run it before the reads it vouches for,
 * in the same read-committed transaction: what they see is at least as new.
 * Returns 1, 0 when unknown (OUT ""), or a negative st_status.
 */
int st_folded_as_of(st_conn *c, int64_t app_id, char *out, size_t cap);

/*
 * A page of level-LEVEL groups of APP_ID, best first by SORT, after the
 * keyset position (AFTER_VALUE, AFTER_KEY) — AFTER_KEY NULL for the first
 * page — at most LIMIT of them: a JSON array of group objects, each with a
 * "cursor" member ("VALUE.KEY") for the next page. With no filter the
 * counts and durations (stall_ms, max_duration_ms, duration_hist) are
 * all-time totals; otherwise sums over the filtered days. STATUSES (a
 * PostgreSQL text[] literal such as "{open,regressed}", NULL for any)
 * keeps the groups whose status (their level-1 key's) is one of them;
 * F->search those with a matching search term.
 */
int st_groups_page(st_conn *c, int64_t app_id, int level, const st_group_filter *f,
		   st_group_sort sort, int64_t after_value, const char *after_key, int64_t limit,
		   const char *statuses, char **out_json);

/*
 * One level-1 group with its level-2 subgroups: {"group","subgroups"}.
 * Under F the counts, first/last seen and daily series are those of the
 * matching reports (zero counts and null times when none match), and only
 * subgroups with a matching report are listed. 0 when the app never had a
 * report in the group (or reprocessing moved all of them away).
 */
int st_group_detail(st_conn *c, int64_t app_id, const char *key1, const st_group_filter *f,
		    char **out_json);

/* A page of a level-2 group's reports matching F, newest first, after
 * (AFTER_US, AFTER_ID) (AFTER_ID 0 for the first page): a JSON array of
 * report summaries each with a "cursor" member. */
int st_group_reports_page(st_conn *c, int64_t app_id, const char *key1, const char *key2,
			  const st_group_filter *f, int64_t after_us, int64_t after_id,
			  int64_t limit, char **out_json);

/*
 * The app's known values of each filter dimension with the reports
 * received on the days FROM … TO (NULL: unbounded), from app_dimensions:
 * {"versions","os_versions","devices","kinds"}, each an array of
 * {"value","reports","first_seen","last_seen"}; versions newest first by
 * first_seen, the others by reports descending; ties by value.
 */
int st_dimensions(st_conn *c, int64_t app_id, const char *from, const char *to, char **out_json);

/* Images frames fall in that have no debug file nor system symbols, the
 * app's own or (SYSTEM) the system's, most affected reports first, then by
 * UUID, after the keyset position (AFTER_REPORTS, AFTER_UUID) — AFTER_UUID
 * NULL for the first page — at most LIMIT: a JSON array of {uuid, arch,
 * name (the image's basename), path (a full path reports gave it, even
 * when others gave its basename: of several, the greatest; null when they
 * gave only its basename), system, reports, app_versions (newest first),
 * last_seen (RFC 3339), cursor "REPORTS.HEX"}. */
int st_dsyms_missing(st_conn *c, int64_t app_id, bool system, int64_t after_reports,
		     const char *after_uuid, int64_t limit, char **out_json);

/* The day report ID of APP_ID was received: 1 with it, or 0 when the app
 * has no such report. */
int st_report_locate(st_conn *c, int64_t app_id, int64_t id, char out_day[11]);

/* Report ID as the API shows it (metadata, symbolization, keys). */
int st_report_json(st_conn *c, int64_t app_id, const char *day, int64_t id,
		   char **out_json);

/* The stored native form of report ID (what reprocessing and traces
 * start from). */
int st_report_raw(st_conn *c, int64_t app_id, const char *day, int64_t id,
		  char **out_json);

#endif
