/*
 * arrivals.c — reprocessing driven by arrivals of debug files
 * (schema/017): recording and reading them, the waits of an arrived UUID,
 * and the bounded safety sweep over report_waits. See reports.h and
 * docs/STORAGE.md §Reprocessing.
 */
#include <string.h>

#include "store/internal.h"
#include "store/reports.h"

int st_arrivals_record(st_conn *c, int64_t app_id, const char *uuids)
{
	/* The images' locks in one order (ingest_reports takes them shared in
	 * the same), released at the commit, as the NOTIFY is sent. */
	static const st_stmt q = {
		"arrivals_record",
		"WITH locked AS (SELECT count(*) AS n FROM (SELECT pg_advisory_xact_lock(h) FROM ("
		" SELECT DISTINCT hashtextextended('image/' || u::text, 7) AS h"
		" FROM unnest($2::uuid[]) u ORDER BY 1) AS x) AS y),"
		" a AS (INSERT INTO debug_file_arrivals (app_id, uuid)"
		" SELECT nullif($1::bigint, 0), u FROM unnest($2::uuid[]) u"
		" WHERE (SELECT n FROM locked) >= 0 RETURNING id)"
		" SELECT pg_notify('" ST_ARRIVALS_CHANNEL "', max(a.id)::text) FROM a",
		2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(uuids));
}

struct arrival_each {
	st_arrival_cb cb;
	void *cls;
};

static int read_arrival(void *cls, const st_row *row)
{
	struct arrival_each *e = cls;
	st_arrival a = {st_row_int64(row, 0), st_row_int64(row, 1), ""};
	if (st_row_copy(row, 2, a.uuid, sizeof a.uuid) < 0)
		return -1;
	return e->cb(e->cls, &a);
}

int st_arrivals_after(st_conn *c, int64_t after, int64_t limit, st_arrival_cb cb, void *cls)
{
	static const st_stmt q = {
		"arrivals_after",
		"SELECT id, coalesce(app_id, 0), upper(uuid::text) FROM debug_file_arrivals"
		" WHERE id > $1 ORDER BY id LIMIT $2",
		2};
	struct arrival_each e = {cb, cls};
	return ST_EXEC(c, &q, read_arrival, &e, ST_INT64(after), ST_INT64(limit));
}

int st_arrivals_prune(st_conn *c, int64_t limit)
{
	static const st_stmt q = {
		"arrivals_prune",
		"DELETE FROM debug_file_arrivals WHERE id IN (SELECT id FROM debug_file_arrivals"
		" WHERE at < now() - interval '1 day' ORDER BY id LIMIT $1)",
		1};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(limit));
}

struct cand_each {
	st_candidate_cb cb;
	void *cls;
};

static int read_candidate(void *cls, const st_row *row)
{
	struct cand_each *e = cls;
	st_candidate cand = {st_row_int64(row, 0), st_row_int64(row, 1), "", ""};
	if (st_row_copy(row, 2, cand.day, sizeof cand.day) < 0 ||
	    st_row_copy(row, 3, cand.uuid, sizeof cand.uuid) < 0)
		return -1;
	return e->cb(e->cls, &cand);
}

int st_arrival_waits(st_conn *c, const st_arrival *a, int64_t after_app, int64_t after_report,
		     int64_t limit, st_candidate_cb cb, void *cls)
{
	/* Per app, a range of the primary key (app_id, uuid, report). */
	static const st_stmt q = {
		"arrival_waits",
		"SELECT w.report, w.app_id, to_char(w.received_day, 'YYYY-MM-DD'),"
		" upper(w.uuid::text) FROM apps a CROSS JOIN LATERAL ("
		" SELECT * FROM report_waits w WHERE w.app_id = a.id AND w.uuid = $2::uuid"
		" AND (a.id > $3 OR w.report > $4) ORDER BY w.report LIMIT $5) AS w"
		" WHERE ($1 = 0 OR a.id = $1) AND a.id >= $3"
		" ORDER BY w.app_id, w.report LIMIT $5",
		5};
	struct cand_each e = {cb, cls};
	return ST_EXEC(c, &q, read_candidate, &e, ST_INT64(a->app_id), ST_TEXT(a->uuid),
		       ST_INT64(after_app), ST_INT64(after_report), ST_INT64(limit));
}

/* Whether a stored file now answers wait w: a file for a missing image,
 * DWARF where the file serving it has only a symbol table (the app's own
 * file wins over the system's, as in srv_symbol_set_images). Moving the
 * report makes it false, so a second sweep finds nothing. An unreadable
 * file is answered only by another upload of its slice (deleted first),
 * whose arrival moves the report: a wait no longer tells when it was
 * stored, and sweeping those every time would move them every time. */
#define ANSWERED                                                                                   \
	"CASE WHEN w.reason IN ('missing', 'system_missing') THEN"                                 \
	" EXISTS (SELECT 1 FROM debug_files d WHERE d.app_id = w.app_id AND d.uuid = w.uuid)"      \
	" OR EXISTS (SELECT 1 FROM system_symbols s WHERE s.uuid = w.uuid)"                        \
	" WHEN w.reason = 'symbol_table' THEN coalesce((SELECT bool_or(d.has_dwarf)"               \
	" FROM debug_files d WHERE d.app_id = w.app_id AND d.uuid = w.uuid),"                      \
	" (SELECT bool_or(s.has_dwarf) FROM system_symbols s WHERE s.uuid = w.uuid), false)"       \
	" ELSE false END"

int st_waits_sweep(st_conn *c, int64_t after, int64_t until, int64_t limit, st_candidate_cb cb,
		   void *cls)
{
	static const st_stmt q = {
		"waits_sweep",
		"WITH r AS (SELECT DISTINCT report FROM report_waits WHERE report > $1"
		" AND report <= $3 ORDER BY report LIMIT $2),"
		" w AS (SELECT w.report, w.app_id, w.received_day,"
		" CASE WHEN " ANSWERED " THEN w.uuid END AS answered"
		" FROM r JOIN report_waits w ON w.report = r.report)"
		" SELECT report, min(app_id), to_char(min(received_day), 'YYYY-MM-DD'),"
		" coalesce(upper(min(answered::text)), '') FROM w GROUP BY report ORDER BY report",
		3};
	struct cand_each e = {cb, cls};
	return ST_EXEC(c, &q, read_candidate, &e, ST_INT64(after), ST_INT64(limit),
		       ST_INT64(until));
}

int st_waits_last(st_conn *c, int64_t *out)
{
	static const st_stmt q = {"waits_last", "SELECT coalesce(max(report), 0) FROM report_waits",
				  0};
	*out = 0;
	return st_exec(c, &q, NULL, 0, st_read_int64, out);
}

int st_report_waits_for(st_conn *c, int64_t app_id, const char *uuid, int64_t report)
{
	static const st_stmt q = {
		"report_waits_for",
		"SELECT 1 FROM report_waits WHERE app_id = $1 AND uuid = $2::uuid AND report = $3",
		3};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(uuid), ST_INT64(report));
}
