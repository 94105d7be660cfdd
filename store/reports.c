/*
 * reports.c — stored reports: idempotency keys, day partitions, the report
 * rows, their waits for symbols, group counters and retention. See
 * reports.h and docs/STORAGE.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "store/internal.h"
#include "store/measures.h"
#include "store/reports.h"

int st_report_partition_ensure(st_conn *c, int64_t app_id, const char *day)
{
	static const st_stmt q = {
		"report_partition_ensure",
		"SELECT ensure_report_partition($1, $2::date)", 2};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day));
}

typedef struct ingest_answers {
	st_ingest_outcome *outcomes;
	int64_t *ids;
	size_t n, got;
} ingest_answers;

static int read_outcome(void *cls, const st_row *row)
{
	ingest_answers *out = cls;
	static const char *const names[] = {
		[ST_INGEST_STORED] = "stored", [ST_INGEST_DUPLICATE] = "duplicate",
		[ST_INGEST_NOT_SAMPLED] = "not_sampled", [ST_INGEST_QUOTA] = "quota",
		[ST_INGEST_STALE] = "stale"};
	if (out->got == out->n)
		return -1;
	const char *name = st_row_text(row, 0);
	for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i]) == 0) {
			out->outcomes[out->got] = (st_ingest_outcome)i;
			out->ids[out->got++] = st_row_int64(row, 1);
			return 0;
		}
	return -1;
}

/* The arrays ingest_reports takes after (app, policy version), in order;
 * all are sent as text[], those of other types cast by the statement. */
enum {
	C_REPORT_ID,
	C_USER_ID,
	C_DAY,
	C_AT,
	C_SAMPLED,
	C_KIND,
	C_SOURCE,
	C_APP_VERSION,
	C_BUILD,
	C_OS,
	C_OS_VERSION,
	C_OS_BUILD,
	C_DEVICE,
	C_CLIENT_TIMESTAMP,
	C_DURATION,
	C_KEY1,
	C_KEY2,
	C_PENDING,
	C_FRAMES1,
	C_FRAMES2,
	C_WAITS,
	C_RAW,
	C_SYMBOLIZED,
	C_RAW_STACKS,
	C_SYMBOLIZED_STACKS,
	C_CULPRIT,
	NCOLUMNS
};

/* After the per-report arrays: the batch's distinct stacks, hashes and
 * texts. */
enum { C_STACK_HASHES = NCOLUMNS, C_STACK_BODIES, NARRAYS };

static const st_stmt ingest_stmt = {
	"reports_ingest",
	"SELECT outcome, report FROM ingest_reports($1, $2, $3::text[], $4::text[],"
	" $5::text[]::date[], $6::text[]::timestamptz[], $7::text[]::boolean[], $8::text[],"
	" $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],"
	" $15::text[], $16::text[], $17::text[]::bigint[], $18::text[], $19::text[],"
	" $20::text[]::boolean[], $21::text[], $22::text[], $23::text[], $24::text[],"
	" $25::text[], $26::text[], $27::text[], $29::text[]::uuid[], $30::text[], $28::text[])",
	2 + NARRAYS};

/* What a report row keeps of its two documents (st_document_split). */
enum { RAW_SKELETON, RAW_STACKS, SYMBOLIZED_SKELETON, SYMBOLIZED_STACKS, NSPLIT };

/* One call of ingest_reports, encoded: PARAMS point into ARRAYS. */
typedef struct ingest_call {
	cm_buf arrays[NARRAYS];
	char (*durations)[24];
	char *(*split)[NSPLIT]; /* per report */
	size_t n;
	st_param params[2 + NARRAYS];
} ingest_call;

static void ingest_call_free(ingest_call *call)
{
	for (size_t col = 0; col < NARRAYS; col++)
		free(call->arrays[col].data);
	free(call->durations);
	for (size_t i = 0; call->split && i < call->n; i++)
		for (size_t k = 0; k < NSPLIT; k++)
			free(call->split[i][k]);
	free(call->split);
}

/* Column COL of R as text, NULL for SQL NULL; DURATION is room for the
 * number, SPLIT its documents as the row keeps them. */
static const char *column_text(const st_new_report *r, size_t col, char duration[24],
			       char *const split[NSPLIT])
{
	switch (col) {
	case C_REPORT_ID: return r->report_id;
	case C_USER_ID: return r->user_id;
	case C_DAY: return r->received_day;
	case C_AT: return r->received_at;
	case C_SAMPLED: return r->sampled ? "t" : "f";
	case C_KIND: return r->kind;
	case C_SOURCE: return r->source;
	case C_APP_VERSION: return r->app_version;
	case C_BUILD: return r->build;
	case C_OS: return r->os;
	case C_OS_VERSION: return r->os_version;
	case C_OS_BUILD: return r->os_build;
	case C_DEVICE: return r->device;
	case C_CLIENT_TIMESTAMP: return r->client_timestamp;
	case C_DURATION:
		if (r->duration_ms < 0)
			return NULL;
		snprintf(duration, 24, "%" PRId64, r->duration_ms);
		return duration;
	case C_KEY1: return r->key1;
	case C_KEY2: return r->key2;
	case C_PENDING: return r->pending ? "t" : "f";
	case C_FRAMES1: return r->frames1;
	case C_FRAMES2: return r->frames2;
	case C_WAITS: return r->waits;
	case C_RAW: return split[RAW_SKELETON];
	case C_SYMBOLIZED: return split[SYMBOLIZED_SKELETON];
	case C_RAW_STACKS: return split[RAW_STACKS];
	case C_SYMBOLIZED_STACKS: return split[SYMBOLIZED_STACKS];
	case C_CULPRIT: return r->culprit;
	}
	return NULL;
}

/* Splits every row's documents into CALL->split and encodes the batch's
 * distinct stacks; 0 or -1. */
static int ingest_call_stacks(ingest_call *call, const st_new_report *const *rows, size_t n)
{
	const st_document **docs = calloc(2 * n, sizeof *docs);
	int rc = docs ? 0 : -1;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		docs[2 * i] = &rows[i]->raw;
		docs[2 * i + 1] = &rows[i]->symbolized;
		char **split = call->split[i];
		rc = st_document_split(&rows[i]->raw, &split[RAW_SKELETON], &split[RAW_STACKS]);
		if (rc == 0)
			rc = st_document_split(&rows[i]->symbolized, &split[SYMBOLIZED_SKELETON],
					       &split[SYMBOLIZED_STACKS]);
	}
	if (rc == 0)
		rc = st_stacks_encode(docs, 2 * n, &call->arrays[C_STACK_HASHES],
				      &call->arrays[C_STACK_BODIES]);
	free(docs);
	return rc;
}

/* 0, or ST_HARD_ERROR (out of memory, rows of different policy versions);
 * free CALL either way. */
static int ingest_call_make(ingest_call *call, int64_t app_id, const st_new_report *const *rows,
			    size_t n)
{
	memset(call, 0, sizeof *call);
	if (n == 0 || n > INT32_MAX)
		return ST_HARD_ERROR;
	const char **items = calloc(n, sizeof *items);
	call->durations = calloc(n, sizeof *call->durations);
	call->split = calloc(n, sizeof *call->split);
	call->n = n;
	int rc = items && call->durations && call->split ? 0 : ST_HARD_ERROR;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (rows[i]->config_version != rows[0]->config_version)
			rc = ST_HARD_ERROR;
	if (rc == 0 && ingest_call_stacks(call, rows, n) != 0)
		rc = ST_HARD_ERROR;
	for (size_t col = 0; rc == 0 && col < NCOLUMNS; col++) {
		for (size_t i = 0; i < n; i++)
			items[i] = column_text(rows[i], col, call->durations[i], call->split[i]);
		st_wire_text_array(&call->arrays[col], items, NULL, n);
		if (call->arrays[col].failed)
			rc = ST_HARD_ERROR;
	}
	for (size_t col = 0; col < NARRAYS; col++)
		call->params[2 + col] = ST_BYTES(call->arrays[col].data, call->arrays[col].len);
	free(items);
	call->params[0] = ST_INT64(app_id);
	call->params[1] = ST_INT64(rows[0]->config_version);
	return rc;
}

int st_report_ingest(st_conn *c, int64_t app_id, const st_new_report *const *rows, size_t n,
		     st_ingest_outcome *outcomes, int64_t *ids)
{
	ingest_call call;
	int rc = ingest_call_make(&call, app_id, rows, n);
	if (rc == 0) {
		ingest_answers out = {outcomes, ids, n, 0};
		rc = st_exec(c, &ingest_stmt, call.params, 2 + NARRAYS, read_outcome, &out);
		if (rc >= 0 && out.got != n)
			rc = ST_HARD_ERROR;
	}
	ingest_call_free(&call);
	return rc;
}

int st_report_ingest_pipeline(st_pipe_cb cb, void *cls)
{
	return st_run_pipeline(&ingest_stmt, cb, cls);
}

int st_report_ingest_send(st_pipe *p, int64_t app_id, const st_new_report *const *rows, size_t n)
{
	ingest_call call;
	int rc = ingest_call_make(&call, app_id, rows, n);
	if (rc == 0)
		rc = st_pipe_send(p, call.params, 2 + NARRAYS);
	ingest_call_free(&call);
	return rc;
}

int st_report_ingest_recv(st_pipe *p, size_t n, st_ingest_outcome *outcomes, int64_t *ids)
{
	ingest_answers out = {outcomes, ids, n, 0};
	int rc = st_pipe_recv(p, read_outcome, &out);
	return rc >= 0 && out.got != n ? ST_HARD_ERROR : rc;
}

int st_report_update_symbols(st_conn *c, int64_t app_id, const char *day, int64_t id,
			     const char *key1, const char *key2, bool pending,
			     const st_document *symbolized)
{
	static const st_stmt q = {
		"report_update_symbols",
		"SELECT update_report_symbols($1, $2::date, $3, $4, $5, $6, $7, $8::uuid[],"
		" $9::text[]::uuid[], $10::text[])",
		10};
	char *skeleton = NULL, *stacks = NULL;
	cm_buf hashes = {0}, bodies = {0};
	const st_document *docs[1] = {symbolized};
	int rc = ST_HARD_ERROR;
	if (st_document_split(symbolized, &skeleton, &stacks) == 0 &&
	    st_stacks_encode(docs, 1, &hashes, &bodies) == 0)
		rc = ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day), ST_INT64(id),
			     ST_TEXT(key1), ST_TEXT(key2), ST_BOOL(pending), ST_TEXT(skeleton),
			     ST_TEXT(stacks), ST_BYTES(hashes.data, hashes.len),
			     ST_BYTES(bodies.data, bodies.len));
	free(skeleton);
	free(stacks);
	free(hashes.data);
	free(bodies.data);
	return rc;
}

int st_group_move(st_conn *c, int64_t app_id, int64_t report, const st_group_ref *from,
		  const st_group_ref *to)
{
	static const st_stmt q = {
		"group_move",
		"SELECT move_report($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::date,"
		" $10::timestamptz, $11, $12, $13, $14, $15, $16::bigint)",
		16};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_INT64(report), ST_TEXT(from->key1),
		       ST_TEXT(from->key2), ST_TEXT(to->key1), ST_TEXT(to->key2),
		       ST_TEXT(to->frames1), ST_TEXT(to->frames2), ST_TEXT(to->day),
		       ST_TEXT(to->at), ST_TEXT(to->app_version ? to->app_version : ""),
		       ST_TEXT(to->os_version ? to->os_version : ""),
		       ST_TEXT(to->device ? to->device : ""), ST_TEXT(to->kind ? to->kind : ""),
		       ST_TEXT(to->user_id), ST_TEXT(to->duration_ms));
}

int st_group_culprit_offer(st_conn *c, int64_t app_id, const char *key1, const char *key2,
			   const char *culprit)
{
	static const st_stmt q = {"group_culprit_offer",
				  "SELECT offer_culprit($1, $2, $3, $4::jsonb)", 4};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(key1), ST_TEXT(key2),
		       ST_TEXT(culprit));
}

int st_group_day_recount(st_conn *c)
{
	static const st_stmt q = {"group_day_recount", "SELECT 1 WHERE recount_group_day()", 0};
	return st_exec(c, &q, NULL, 0, NULL, NULL);
}

int st_report_waits_add(st_conn *c, int64_t app_id, int64_t report, const char *day,
			const char *waits)
{
	static const st_stmt q = {
		"report_waits_add", "SELECT add_report_waits($1, $2, $3::date, $4::jsonb)", 4};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_INT64(report), ST_TEXT(day),
		       ST_TEXT(waits));
}

int st_report_waits_clear(st_conn *c, int64_t app_id, const char *day, int64_t report)
{
	static const st_stmt q = {"report_waits_clear",
				  "SELECT clear_report_waits($1, $2::date, $3)", 3};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day), ST_INT64(report));
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
		"DELETE FROM report_keys WHERE app_id = $1 AND received_day < $2::date", 2};
	static const st_stmt quota = {
		"reports_purge_quota",
		"DELETE FROM user_quota WHERE app_id = $1 AND day < $2::date", 2};
	/* Every wait of those days went with their partitions. */
	static const st_stmt counts = {
		"reports_purge_image_waits",
		"DELETE FROM image_waits WHERE app_id = $1 AND day < $2::date", 2};
	int64_t dropped = 0;
	int rc = ST_EXEC(c, &drop, read_count, &dropped, ST_INT64(app_id), ST_TEXT(before_day));
	if (rc >= 0)
		rc = ST_EXEC(c, &keys, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
	if (rc >= 0)
		rc = ST_EXEC(c, &quota, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
	if (rc >= 0)
		rc = ST_EXEC(c, &counts, NULL, NULL, ST_INT64(app_id), ST_TEXT(before_day));
	if (rc >= 0)
		rc = st_measures_purge(c, app_id, before_day);
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
	f.system = st_row_bool(row, 4);
	f.symcache_version = st_row_int64(row, 5);
	if (st_row_copy(row, 0, f.uuid, sizeof f.uuid) < 0 ||
	    st_row_copy(row, 1, f.arch, sizeof f.arch) < 0 ||
	    st_row_copy(row, 3, f.symcache_path, sizeof f.symcache_path) < 0 ||
	    st_row_copy(row, 6, f.debug_path, sizeof f.debug_path) < 0)
		return -1;
	return e->cb(e->cls, &f);
}

int st_symbol_files(st_conn *c, int64_t app_id, const char *uuids,
		    st_symbol_file_cb cb, void *cls)
{
	static const st_stmt q = {
		"symbol_files",
		"SELECT upper(uuid::text), arch, has_dwarf, symcache_path, false,"
		" symcache_version, debug_path FROM debug_files"
		" WHERE app_id = $1 AND uuid = ANY($2::uuid[])"
		" UNION ALL SELECT upper(uuid::text), arch, has_dwarf, symcache_path, true,"
		" symcache_version, '' FROM system_symbols WHERE uuid = ANY($2::uuid[])",
		2};
	struct sf_each e = {cb, cls};
	return ST_EXEC(c, &q, read_symbol_file, &e, ST_INT64(app_id), ST_TEXT(uuids));
}

static int read_meta(void *cls, const st_row *row)
{
	st_report_meta *m = cls;
	char **fields[] = {&m->raw,	    &m->key1,	     &m->key2,	     &m->user_id,
			   &m->kind,	    &m->app_version, &m->os_version, &m->device,
			   &m->received_at, &m->source,	     &m->os_build,   &m->client_timestamp,
			   &m->duration_ms};
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
		"SELECT report_raw(r), key1, key2, user_id, kind, app_version, os_version, device,"
		" to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		" source, os_build, client_timestamp, duration_ms"
		" FROM reports r WHERE app_id = $1 AND received_day = $2::date AND id = $3",
		3};
	return ST_EXEC(c, &q, read_meta, out, ST_INT64(app_id), ST_TEXT(day), ST_INT64(id));
}

void st_report_meta_clear(st_report_meta *m)
{
	char **fields[] = {&m->raw,	    &m->key1,	     &m->key2,	     &m->user_id,
			   &m->kind,	    &m->app_version, &m->os_version, &m->device,
			   &m->received_at, &m->source,	     &m->os_build,   &m->client_timestamp,
			   &m->duration_ms};
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		free(*fields[i]);
		*fields[i] = NULL;
	}
}

int st_report_lock(st_conn *c, int64_t app_id, const char *day, int64_t id)
{
	static const st_stmt q = {
		"report_lock",
		"SELECT 1 FROM reports WHERE app_id = $1 AND received_day = $2::date AND id = $3"
		" FOR UPDATE SKIP LOCKED",
		3};
	return ST_EXEC(c, &q, NULL, NULL, ST_INT64(app_id), ST_TEXT(day), ST_INT64(id));
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
