/*
 * reports.c — stored reports: idempotency keys, day partitions, the report
 * rows, their waits for symbols, group counters and retention. See
 * reports.h and docs/STORAGE.md.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/reports.h"

static int read_id(void *cls, const st_row *row)
{
	*(int64_t *)cls = st_row_int64(row, 0);
	return 0;
}

int st_report_key_get(st_conn *c, int64_t app_id, const char *report_id,
		      int64_t *out_id)
{
	static const st_stmt q = {
		"report_key_get",
		"SELECT id FROM report_keys WHERE app_id = $1 AND report_id = $2", 2};
	return ST_EXEC(c, &q, read_id, out_id, ST_INT64(app_id), ST_TEXT(report_id));
}

int st_report_key_claim(st_conn *c, int64_t app_id, const char *report_id,
			const char *day, int64_t *out_id)
{
	static const st_stmt q = {
		"report_key_claim",
		"INSERT INTO report_keys (app_id, report_id, id, received_day)"
		" VALUES ($1, $2, nextval('report_ids'), $3::date)"
		" ON CONFLICT (app_id, report_id) DO NOTHING RETURNING id",
		3};
	int rc = ST_EXEC(c, &q, read_id, out_id, ST_INT64(app_id), ST_TEXT(report_id),
			 ST_TEXT(day));
	if (rc != 0)
		return rc;
	/* Taken by a resend that committed first: answer with its id. */
	int got = st_report_key_get(c, app_id, report_id, out_id);
	return got < 0 ? got : 0;
}

int st_report_partition_ensure(st_conn *c, int64_t app_id, const char *day)
{
	static const st_stmt q = {
		"report_partition_ensure",
		"SELECT ensure_report_partition($1, $2::date)", 2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day));
}

int st_report_insert(st_conn *c, const st_report_row *r)
{
	/* Sixteen parameters at most per statement: the metadata travels as
	 * one JSON object and is unpacked in SQL. */
	static const st_stmt q = {
		"report_insert",
		"INSERT INTO reports (id, app_id, received_day, received_at, report_id,"
		" user_id, kind, source, app_version, build, os, os_version, os_build,"
		" device, client_timestamp, duration_ms, key1, key2, pending, raw,"
		" symbolized)"
		" SELECT $1, $2, $3::date, $4::timestamptz, $5, $6, $7, $8,"
		" m->>'app_version', m->>'build', m->>'os', m->>'os_version',"
		" m->>'os_build', m->>'device', m->>'client_timestamp',"
		" nullif($10::bigint, -1), $11, $12, $13, $14::jsonb, $15::jsonb"
		" FROM (SELECT $9::jsonb AS m) AS meta",
		15};
	json_t *meta = json_object();
	if (!meta)
		return ST_HARD_ERROR;
	const struct {
		const char *key, *value;
	} fields[] = {
		{"app_version", r->app_version}, {"build", r->build},
		{"os", r->os}, {"os_version", r->os_version},
		{"os_build", r->os_build}, {"device", r->device},
		{"client_timestamp", r->client_timestamp},
	};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (fields[i].value)
			json_object_set_new(meta, fields[i].key, json_string(fields[i].value));
	char *meta_text = json_dumps(meta, JSON_COMPACT);
	json_decref(meta);
	if (!meta_text)
		return ST_HARD_ERROR;
	int rc = ST_EXEC(c, &q, NULL, NULL, ST_INT64(r->id), ST_INT64(r->app_id),
			 ST_TEXT(r->received_day), ST_TEXT(r->received_at),
			 ST_TEXT(r->report_id), ST_TEXT(r->user_id), ST_TEXT(r->kind),
			 ST_TEXT(r->source), ST_TEXT(meta_text), ST_INT64(r->duration_ms),
			 ST_TEXT(r->key1), ST_TEXT(r->key2), ST_BOOL(r->pending),
			 ST_TEXT(r->raw), ST_TEXT(r->symbolized));
	free(meta_text);
	return rc;
}

int st_report_update_symbols(st_conn *c, int64_t app_id, const char *day, int64_t id,
			     const char *key1, const char *key2, bool pending,
			     const char *symbolized)
{
	static const st_stmt q = {
		"report_update_symbols",
		"UPDATE reports SET key1 = $4, key2 = $5, pending = $6, symbolized = $7::jsonb"
		" WHERE app_id = $1 AND received_day = $2::date AND id = $3",
		7};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day), ST_INT64(id),
		       ST_TEXT(key1), ST_TEXT(key2), ST_BOOL(pending), ST_TEXT(symbolized));
}

static int read_bool(void *cls, const st_row *row)
{
	*(bool *)cls = st_row_bool(row, 0);
	return 0;
}

/* One level of st_group_count. */
static int count_level(st_conn *c, int64_t app_id, int level, const char *key,
		       const char *parent, const char *frames, const st_group_ref *ref,
		       int delta)
{
	static const st_stmt upsert_group = {
		"group_add",
		"INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports,"
		" users, first_seen, last_seen)"
		" VALUES ($1, $2, $3, $4, $5::jsonb, 1, 0, $6::timestamptz, $6::timestamptz)"
		" ON CONFLICT (app_id, level, key) DO UPDATE SET reports = g.reports + 1,"
		" first_seen = least(g.first_seen, excluded.first_seen),"
		" last_seen = greatest(g.last_seen, excluded.last_seen)",
		6};
	static const st_stmt remove_group = {
		"group_remove",
		"UPDATE groups SET reports = reports - 1"
		" WHERE app_id = $1 AND level = $2 AND key = $3 AND reports > 0",
		3};
	/* RETURNING tells a user new to the group (the row was inserted:
	 * xmax is 0) from one seen before. */
	static const st_stmt add_user = {
		"group_user_add",
		"INSERT INTO group_users AS u (app_id, level, key, user_id, reports)"
		" VALUES ($1, $2, $3, $4, 1)"
		" ON CONFLICT (app_id, level, key, user_id) DO UPDATE"
		" SET reports = u.reports + 1 RETURNING (xmax = 0)",
		4};
	/* Removing: decrement, then drop a row that reached zero, so
	 * group_users keeps one row per user with reports in the group. */
	static const st_stmt remove_user = {
		"group_user_remove",
		"UPDATE group_users SET reports = reports - 1"
		" WHERE app_id = $1 AND level = $2 AND key = $3 AND user_id = $4"
		" AND reports > 0 RETURNING reports = 0",
		4};
	static const st_stmt drop_user = {
		"group_user_drop",
		"DELETE FROM group_users WHERE app_id = $1 AND level = $2 AND key = $3"
		" AND user_id = $4 AND reports = 0",
		4};
	static const st_stmt users = {
		"group_users_step",
		"UPDATE groups SET users = users + $4"
		" WHERE app_id = $1 AND level = $2 AND key = $3",
		4};
	static const st_stmt add_daily = {
		"group_daily_add",
		"INSERT INTO group_daily AS d (app_id, level, key, day, app_version,"
		" os_version, device, kind, user_id, reports)"
		" VALUES ($1, $2, $3, $4::date, $5, $6, $7, $8, $9, 1)"
		" ON CONFLICT (app_id, level, key, day, app_version, os_version, device,"
		" kind, user_id) DO UPDATE SET reports = d.reports + 1",
		9};
	static const st_stmt remove_daily = {
		"group_daily_remove",
		"UPDATE group_daily SET reports = reports - 1"
		" WHERE app_id = $1 AND level = $2 AND key = $3 AND day = $4::date"
		" AND app_version = $5 AND os_version = $6 AND device = $7 AND kind = $8"
		" AND user_id = $9 AND reports > 0",
		9};
	static const st_stmt drop_daily = {
		"group_daily_drop",
		"DELETE FROM group_daily WHERE app_id = $1 AND level = $2 AND key = $3"
		" AND day = $4::date AND app_version = $5 AND os_version = $6"
		" AND device = $7 AND kind = $8 AND user_id = $9 AND reports = 0",
		9};
#define DIMS                                                                            \
	ST_TEXT(ref->day), ST_TEXT(ref->app_version ? ref->app_version : ""),          \
		ST_TEXT(ref->os_version ? ref->os_version : ""),                        \
		ST_TEXT(ref->device ? ref->device : ""), ST_TEXT(ref->kind ? ref->kind : ""), \
		ST_TEXT(ref->user_id)
	int rc;
	if (delta > 0) {
		rc = ST_EXEC(c, &upsert_group, NULL, NULL, ST_INT64(app_id), ST_INT64(level),
			     ST_TEXT(key), ST_TEXT(parent), ST_TEXT(frames), ST_TEXT(ref->at));
		bool fresh = false;
		if (rc >= 0)
			rc = ST_EXEC(c, &add_user, read_bool, &fresh, ST_INT64(app_id),
				     ST_INT64(level), ST_TEXT(key), ST_TEXT(ref->user_id));
		if (rc >= 0 && fresh)
			rc = ST_EXEC(c, &users, NULL, NULL, ST_INT64(app_id), ST_INT64(level),
				     ST_TEXT(key), ST_INT64(1));
		if (rc >= 0)
			rc = ST_EXEC(c, &add_daily, NULL, NULL, ST_INT64(app_id), ST_INT64(level),
				     ST_TEXT(key), DIMS);
	} else {
		rc = ST_EXEC(c, &remove_group, NULL, NULL, ST_INT64(app_id), ST_INT64(level),
			     ST_TEXT(key));
		bool gone = false;
		if (rc >= 0)
			rc = ST_EXEC(c, &remove_user, read_bool, &gone, ST_INT64(app_id),
				     ST_INT64(level), ST_TEXT(key), ST_TEXT(ref->user_id));
		if (rc >= 0 && gone)
			rc = ST_EXEC(c, &drop_user, NULL, NULL, ST_INT64(app_id),
				     ST_INT64(level), ST_TEXT(key), ST_TEXT(ref->user_id));
		if (rc >= 0 && gone)
			rc = ST_EXEC(c, &users, NULL, NULL, ST_INT64(app_id), ST_INT64(level),
				     ST_TEXT(key), ST_INT64(-1));
		if (rc >= 0)
			rc = ST_EXEC(c, &remove_daily, NULL, NULL, ST_INT64(app_id),
				     ST_INT64(level), ST_TEXT(key), DIMS);
		if (rc >= 0)
			rc = ST_EXEC(c, &drop_daily, NULL, NULL, ST_INT64(app_id),
				     ST_INT64(level), ST_TEXT(key), DIMS);
	}
#undef DIMS
	return rc < 0 ? rc : 1;
}

int st_group_count(st_conn *c, int64_t app_id, const st_group_ref *ref, int delta)
{
	/* Level 1 before level 2, always, so two transactions touching the
	 * same groups lock them in the same order. */
	int rc = count_level(c, app_id, 1, ref->key1, NULL, ref->frames1, ref, delta);
	if (rc >= 0)
		rc = count_level(c, app_id, 2, ref->key2, ref->key1, ref->frames2, ref, delta);
	return rc;
}

int st_report_wait_add(st_conn *c, int64_t app_id, const char *uuid, int64_t report,
		       const char *day, const char *image_name, const char *arch,
		       const char *reason)
{
	static const st_stmt q = {
		"report_wait_add",
		"INSERT INTO report_waits (app_id, uuid, report, received_day, image_name,"
		" arch, reason) VALUES ($1, $2::uuid, $3, $4::date, $5, $6, $7)"
		" ON CONFLICT (app_id, uuid, report) DO UPDATE SET reason = excluded.reason",
		7};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(uuid), ST_INT64(report),
		       ST_TEXT(day), ST_TEXT(image_name), ST_TEXT(arch), ST_TEXT(reason));
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
