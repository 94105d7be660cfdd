/*
 * reports.c — stored reports: idempotency keys, day partitions, the report
 * rows, their waits for symbols, group counters and retention. See
 * reports.h and docs/STORAGE.md.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "store/internal.h"
#include "store/reports.h"

int st_report_partition_ensure(st_conn *c, int64_t app_id, const char *day)
{
	static const st_stmt q = {
		"report_partition_ensure",
		"SELECT ensure_report_partition($1, $2::date)", 2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day));
}

typedef struct ingest_answer {
	st_ingest_outcome *outcome;
	int64_t *id;
} ingest_answer;

static int read_outcome(void *cls, const st_row *row)
{
	ingest_answer *out = cls;
	static const char *const names[] = {
		[ST_INGEST_STORED] = "stored", [ST_INGEST_DUPLICATE] = "duplicate",
		[ST_INGEST_NOT_SAMPLED] = "not_sampled", [ST_INGEST_QUOTA] = "quota",
		[ST_INGEST_STALE] = "stale"};
	const char *name = st_row_text(row, 0);
	for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i]) == 0) {
			*out->outcome = (st_ingest_outcome)i;
			*out->id = st_row_int64(row, 1);
			return 0;
		}
	return -1;
}

int st_report_ingest(st_conn *c, int64_t app_id, const st_new_report *r,
		     st_ingest_outcome *outcome, int64_t *id)
{
	static const st_stmt q = {
		"report_ingest",
		"SELECT outcome, report FROM ingest_report($1, $2, $3::date, $4::timestamptz,"
		" $5, $6::jsonb, $7::jsonb, $8::jsonb, $9::jsonb, $10::json, $11::json)",
		11};
	json_t *meta = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:b}", "report_id", r->report_id,
				 "user_id", r->user_id, "kind", r->kind, "source", r->source,
				 "key1", r->key1, "key2", r->key2, "pending", r->pending);
	if (!meta)
		return ST_HARD_ERROR;
	const struct {
		const char *key, *value;
	} optional[] = {
		{"app_version", r->app_version}, {"build", r->build},
		{"os", r->os}, {"os_version", r->os_version},
		{"os_build", r->os_build}, {"device", r->device},
		{"client_timestamp", r->client_timestamp},
	};
	for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
		if (optional[i].value)
			json_object_set_new(meta, optional[i].key, json_string(optional[i].value));
	if (r->duration_ms >= 0)
		json_object_set_new(meta, "duration_ms", json_integer(r->duration_ms));
	char *meta_text = cm_json_dump(meta, NULL);
	json_decref(meta);
	if (!meta_text)
		return ST_HARD_ERROR;
	ingest_answer out = {outcome, id};
	*id = 0;
	int rc = ST_EXEC(c, &q, read_outcome, &out, ST_INT64(app_id),
			 ST_INT64(r->config_version), ST_TEXT(r->received_day),
			 ST_TEXT(r->received_at), ST_BOOL(r->sampled),
			 ST_TEXT(meta_text), ST_TEXT(r->frames1), ST_TEXT(r->frames2),
			 ST_TEXT(r->waits), ST_TEXT(r->raw), ST_TEXT(r->symbolized));
	free(meta_text);
	return rc == 0 ? ST_HARD_ERROR : rc;
}

int st_report_update_symbols(st_conn *c, int64_t app_id, const char *day, int64_t id,
			     const char *key1, const char *key2, bool pending,
			     const char *symbolized)
{
	static const st_stmt q = {
		"report_update_symbols",
		"UPDATE reports SET key1 = $4, key2 = $5, pending = $6, symbolized = $7::json"
		" WHERE app_id = $1 AND received_day = $2::date AND id = $3",
		7};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day), ST_INT64(id),
		       ST_TEXT(key1), ST_TEXT(key2), ST_BOOL(pending), ST_TEXT(symbolized));
}

int st_group_count(st_conn *c, int64_t app_id, const st_group_ref *ref, int delta)
{
	static const st_stmt q = {
		"group_count",
		"SELECT count_report($1, $2, $3, $4::jsonb, $5::jsonb, $6::date,"
		" $7::timestamptz, $8, $9, $10, $11, $12, $13::integer)",
		13};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(ref->key1),
		       ST_TEXT(ref->key2), ST_TEXT(ref->frames1), ST_TEXT(ref->frames2),
		       ST_TEXT(ref->day), ST_TEXT(ref->at),
		       ST_TEXT(ref->app_version ? ref->app_version : ""),
		       ST_TEXT(ref->os_version ? ref->os_version : ""),
		       ST_TEXT(ref->device ? ref->device : ""),
		       ST_TEXT(ref->kind ? ref->kind : ""), ST_TEXT(ref->user_id),
		       ST_INT64(delta));
}

int st_report_waits_add(st_conn *c, int64_t app_id, int64_t report, const char *day,
			const char *waits)
{
	static const st_stmt q = {
		"report_waits_add", "SELECT add_report_waits($1, $2, $3::date, $4::jsonb)", 4};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_INT64(report), ST_TEXT(day),
		       ST_TEXT(waits));
}

int st_report_waits_clear(st_conn *c, int64_t report)
{
	static const st_stmt q = {
		"report_waits_clear", "DELETE FROM report_waits WHERE report = $1", 1};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(report));
}

static int read_count(void *cls, const st_row *row)
{
	*(int64_t *)cls = st_row_int64(row, 0);
	return 0;
}

int st_reports_purge(st_conn *c, int64_t app_id, const char *before_day)
{
	static const st_stmt drop = {
		"reports_purge_drop", "SELECT drop_report_partitions($1, $2::date)", 2};
	static const st_stmt keys = {
		"reports_purge_keys",
		"WITH gone AS (DELETE FROM report_keys WHERE app_id = $1"
		" AND received_day < $2::date RETURNING id)"
		" DELETE FROM report_waits w USING gone WHERE w.report = gone.id",
		2};
	static const st_stmt quota = {
		"reports_purge_quota",
		"DELETE FROM user_quota WHERE app_id = $1 AND day < $2::date", 2};
	int64_t dropped = 0;
	int rc = ST_EXEC(c, &drop, read_count, &dropped, ST_INT64(app_id), ST_TEXT(before_day));
	if (rc >= 0)
		rc = ST_EXEC(c, &keys, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
	if (rc >= 0)
		rc = ST_EXEC(c, &quota, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
	return rc < 0 ? rc : (int)dropped;
}

struct sf_each {
	st_symbol_file_cb cb;
	void *cls;
};

static int read_symbol_file(void *cls, const st_row *row)
{
	struct sf_each *e = cls;
	st_symbol_file f;
	memset(&f, 0, sizeof f);
	f.has_dwarf = st_row_bool(row, 2);
	if (st_row_copy(row, 0, f.uuid, sizeof f.uuid) < 0 ||
	    st_row_copy(row, 1, f.arch, sizeof f.arch) < 0 ||
	    st_row_copy(row, 3, f.symcache_path, sizeof f.symcache_path) < 0)
		return -1;
	return e->cb(e->cls, &f);
}

int st_symbol_files(st_conn *c, int64_t app_id, const char *uuids,
		    st_symbol_file_cb cb, void *cls)
{
	static const st_stmt q = {
		"symbol_files",
		"SELECT upper(uuid::text), arch, has_dwarf, symcache_path FROM debug_files"
		" WHERE app_id = $1 AND uuid = ANY($2::uuid[])",
		2};
	struct sf_each e = {cb, cls};
	return ST_EXEC(c, &q, read_symbol_file, &e, ST_INT64(app_id), ST_TEXT(uuids));
}

struct cand_each {
	st_candidate_cb cb;
	void *cls;
};

static int read_candidate(void *cls, const st_row *row)
{
	struct cand_each *e = cls;
	st_candidate cand = {st_row_int64(row, 0), st_row_int64(row, 1), ""};
	if (st_row_copy(row, 2, cand.day, sizeof cand.day) < 0)
		return -1;
	return e->cb(e->cls, &cand);
}

int st_reprocess_candidates(st_conn *c, int64_t limit, st_candidate_cb cb, void *cls)
{
	static const st_stmt q = {
		"reprocess_candidates",
		"SELECT w.report, w.app_id, to_char(min(w.received_day), 'YYYY-MM-DD')"
		" FROM report_waits w JOIN debug_files d ON d.app_id = w.app_id AND d.uuid = w.uuid"
		" WHERE w.reason = 'missing'"
		" OR (w.reason = 'malformed' AND d.created_at > w.created_at)"
		" OR (w.reason = 'symbol_table' AND d.has_dwarf)"
		" GROUP BY w.report, w.app_id ORDER BY w.report LIMIT $1",
		1};
	struct cand_each e = {cb, cls};
	return ST_EXEC(c, &q, read_candidate, &e, ST_INT64(limit));
}

static int read_meta(void *cls, const st_row *row)
{
	st_report_meta *m = cls;
	char **fields[] = {&m->raw, &m->key1, &m->key2, &m->user_id, &m->kind,
			   &m->app_version, &m->os_version, &m->device, &m->received_at,
			   &m->source, &m->os_build, &m->client_timestamp};
	for (int i = 0; i < (int)(sizeof fields / sizeof fields[0]); i++) {
		const char *t = st_row_text(row, i);
		free(*fields[i]);
		*fields[i] = t ? strdup(t) : NULL;
		if (t && !*fields[i])
			return -1;
	}
	return 0;
}

int st_report_meta_get(st_conn *c, int64_t app_id, const char *day, int64_t id,
		       st_report_meta *out)
{
	static const st_stmt q = {
		"report_meta",
		"SELECT raw::text, key1, key2, user_id, kind, app_version, os_version, device,"
		" to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		" source, os_build, client_timestamp"
		" FROM reports WHERE app_id = $1 AND received_day = $2::date AND id = $3",
		3};
	return ST_EXEC(c, &q, read_meta, out, ST_INT64(app_id), ST_TEXT(day), ST_INT64(id));
}

void st_report_meta_clear(st_report_meta *m)
{
	char **fields[] = {&m->raw, &m->key1, &m->key2, &m->user_id, &m->kind,
			   &m->app_version, &m->os_version, &m->device, &m->received_at,
			   &m->source, &m->os_build, &m->client_timestamp};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		free(*fields[i]);
		*fields[i] = NULL;
	}
}

int st_report_lock(st_conn *c, int64_t id)
{
	static const st_stmt q = {
		"report_lock",
		"SELECT 1 FROM report_keys WHERE id = $1 FOR UPDATE SKIP LOCKED", 1};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(id));
}

struct app_each {
	st_app_id_cb cb;
	void *cls;
};

static int read_app_id(void *cls, const st_row *row)
{
	struct app_each *e = cls;
	return e->cb(e->cls, st_row_int64(row, 0));
}

int st_app_ids(st_conn *c, st_app_id_cb cb, void *cls)
{
	static const st_stmt q = {"app_ids", "SELECT id FROM apps ORDER BY id", 0};
	struct app_each e = {cb, cls};
	return st_exec(c, &q, NULL, 0, read_app_id, &e);
}
