/*
 * arrivals.c — reprocessing driven by arrivals of debug files
 * (schema/017): recording and reading them, the reports waiting for an
 * arrived UUID (reports.waits, schema/030), and the safety sweep over the
 * waits a stored file answers. See reports.h and
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

struct arrival_file_each {
	st_arrival_file_cb cb;
	void *cls;
};

static int read_arrival_file(void *cls, const st_row *row)
{
	struct arrival_file_each *e = cls;
	st_arrival a = {st_row_int64(row, 0), st_row_int64(row, 1), ""};
	if (st_row_copy(row, 2, a.uuid, sizeof a.uuid) < 0)
		return -1;
	return e->cb(e->cls, &a, st_row_text(row, 3));
}

int st_arrivals_unclaimed(st_conn *c, int64_t limit, st_arrival_file_cb cb, void *cls)
{
	static const st_stmt q = {
		"arrivals_unclaimed",
		"SELECT a.id, coalesce(a.app_id, 0), upper(a.uuid::text), f.path"
		" FROM (SELECT id, app_id, uuid FROM debug_file_arrivals"
		"  WHERE claimed_until IS NULL OR claimed_until < now() ORDER BY id LIMIT $1) a"
		" LEFT JOIN LATERAL (SELECT d.symcache_path AS path FROM debug_files d"
		"  WHERE d.app_id = a.app_id AND d.uuid = a.uuid"
		"  UNION ALL SELECT s.symcache_path FROM system_symbols s WHERE s.uuid = a.uuid) f"
		" ON true ORDER BY a.id",
		1};
	struct arrival_file_each e = {cb, cls};
	return ST_EXEC(c, &q, read_arrival_file, &e, ST_INT64(limit));
}

int st_arrival_claim(st_conn *c, int64_t id, int64_t lease_s)
{
	/* Two servers claiming at once: the second waits for the first's
	 * commit, then finds the claim running and updates nothing. */
	static const st_stmt q = {
		"arrival_claim",
		"UPDATE debug_file_arrivals SET claimed_until = now() + make_interval(secs => $2)"
		" WHERE id = $1 AND (claimed_until IS NULL OR claimed_until < now())",
		2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(id), ST_INT64(lease_s));
}

int st_arrival_renew(st_conn *c, int64_t id, int64_t lease_s)
{
	static const st_stmt q = {
		"arrival_renew",
		"UPDATE debug_file_arrivals SET claimed_until = now() + make_interval(secs => $2)"
		" WHERE id = $1",
		2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(id), ST_INT64(lease_s));
}

int st_arrival_done(st_conn *c, int64_t id)
{
	static const st_stmt q = {"arrival_done", "DELETE FROM debug_file_arrivals WHERE id = $1",
				  1};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(id));
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

struct day_out {
	int64_t *app_id;
	char *day;
};

static int read_day(void *cls, const st_row *row)
{
	struct day_out *out = cls;
	*out->app_id = st_row_int64(row, 0);
	return st_row_copy(row, 1, out->day, 11);
}

int st_arrival_next_day(st_conn *c, const st_arrival *a, int64_t *app_id, char *day)
{
	/* Per app, a range of image_waits' primary key (app_id, uuid, day, …). */
	static const st_stmt q = {
		"arrival_next_day",
		"SELECT a.id, to_char(d.day, 'YYYY-MM-DD') FROM apps a CROSS JOIN LATERAL ("
		" SELECT w.day FROM image_waits w WHERE w.app_id = a.id AND w.uuid = $2::uuid"
		" AND (a.id > $3 OR w.day > $4::date) ORDER BY w.day LIMIT 1) AS d"
		" WHERE ($1 = 0 OR a.id = $1) AND a.id >= $3 ORDER BY a.id LIMIT 1",
		4};
	struct day_out out = {app_id, day};
	return ST_EXEC(c, &q, read_day, &out, ST_INT64(a->app_id), ST_TEXT(a->uuid),
		       ST_INT64(*app_id), ST_TEXT(day));
}

int st_arrival_waits(st_conn *c, const char *uuid, int64_t app_id, const char *day,
		     int64_t after_report, int64_t limit, st_candidate_cb cb, void *cls)
{
	static const st_stmt q = {
		"arrival_waits",
		"SELECT r.id, r.app_id, to_char(r.received_day, 'YYYY-MM-DD'), "
		"upper($2::uuid::text)"
		" FROM reports r WHERE r.app_id = $1 AND r.received_day = $3::date"
		" AND r.waits IS NOT NULL AND wait_uuids(r.waits) @> ARRAY[$2::uuid]"
		" AND r.id > $4 ORDER BY r.id LIMIT $5",
		5};
	struct cand_each e = {cb, cls};
	return ST_EXEC(c, &q, read_candidate, &e, ST_INT64(app_id), ST_TEXT(uuid), ST_TEXT(day),
		       ST_INT64(after_report), ST_INT64(limit));
}

int st_reports_after(st_conn *c, int64_t app_id, const char *day, int64_t after_report,
		     int64_t limit, st_candidate_cb cb, void *cls)
{
	/* A walk of the primary key (app_id, received_day, id). */
	static const st_stmt q = {"reports_after",
				  "SELECT r.id, r.app_id, to_char(r.received_day, 'YYYY-MM-DD'), ''"
				  " FROM reports r WHERE r.app_id = $1"
				  " AND (r.received_day, r.id) > ($2::date, $3::bigint)"
				  " ORDER BY r.received_day, r.id LIMIT $4",
				  4};
	struct cand_each e = {cb, cls};
	return ST_EXEC(c, &q, read_candidate, &e, ST_INT64(app_id), ST_TEXT(day),
		       ST_INT64(after_report), ST_INT64(limit));
}

/* Whether a stored file now answers the waits counted by image_waits
 * row w: a file for a missing image, DWARF where the file serving it has
 * only a symbol table (the app's own file wins over the system's, as in
 * srv_symbol_set_images). Moving the reports makes the row go, so a second
 * sweep finds nothing. An unreadable file is answered only by another
 * upload of its slice (deleted first), whose arrival moves the reports: a
 * wait no longer tells when it was stored, and sweeping those every time
 * would move them every time. */
#define ANSWERED                                                                                   \
	"CASE WHEN w.reason IN ('missing', 'system_missing') THEN"                                 \
	" EXISTS (SELECT 1 FROM debug_files d WHERE d.app_id = w.app_id AND d.uuid = w.uuid)"      \
	" OR EXISTS (SELECT 1 FROM system_symbols s WHERE s.uuid = w.uuid)"                        \
	" WHEN w.reason = 'symbol_table' THEN coalesce((SELECT bool_or(d.has_dwarf)"               \
	" FROM debug_files d WHERE d.app_id = w.app_id AND d.uuid = w.uuid),"                      \
	" (SELECT bool_or(s.has_dwarf) FROM system_symbols s WHERE s.uuid = w.uuid), false)"       \
	" ELSE false END"

static int read_wait_day(void *cls, const st_row *row)
{
	st_wait_day *out = cls;
	out->app_id = st_row_int64(row, 0);
	if (st_row_copy(row, 1, out->uuid, sizeof out->uuid) < 0)
		return -1;
	return st_row_copy(row, 2, out->day, sizeof out->day);
}

int st_sweep_next(st_conn *c, st_wait_day *pos)
{
	/* A range of image_waits' primary key (app_id, uuid, day, reason):
	 * every counter after POS when nothing answers any. */
	static const st_stmt q = {
		"sweep_next",
		"SELECT w.app_id, upper(w.uuid::text), to_char(w.day, 'YYYY-MM-DD') FROM "
		"image_waits w"
		" WHERE (w.app_id, w.uuid, w.day) > ($1, $2::uuid, $3::date) AND " ANSWERED
		" ORDER BY w.app_id, w.uuid, w.day LIMIT 1",
		3};
	return ST_EXEC(c, &q, read_wait_day, pos, ST_INT64(pos->app_id), ST_TEXT(pos->uuid),
		       ST_TEXT(pos->day));
}

int st_report_waits_for(st_conn *c, int64_t app_id, const char *day, const char *uuid,
			int64_t report)
{
	static const st_stmt q = {
		"report_waits_for",
		"SELECT 1 FROM reports WHERE app_id = $1 AND received_day = $2::date AND id = $3"
		" AND waits IS NOT NULL AND wait_uuids(waits) @> ARRAY[$4::uuid]",
		4};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day), ST_INT64(report),
		       ST_TEXT(uuid));
}
