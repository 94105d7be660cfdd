/*
 * internal.h — what the files of store/ share to run SQL; nothing outside
 * store/ includes it.
 *
 * Each store file declares its statements as static st_stmt values next to
 * the function that runs them; st_exec prepares a statement the first time
 * a connection sees it (and again after the connection was reset) and then
 * only executes it with bound parameters. Rows reach a callback as st_row
 * handles whose values live until the callback returns.
 */
#ifndef STALLSCOPE_STORE_INTERNAL_H
#define STALLSCOPE_STORE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "store/store.h"

/* A prepared statement: NAME unique in the process, SQL with $1…$NPARAMS. */
typedef struct st_stmt {
	const char *name;
	const char *sql;
	int nparams;
} st_stmt;

#define ST_MAX_PARAMS 32

typedef enum st_param_kind {
	ST_PARAM_NULL,
	ST_PARAM_TEXT,
	ST_PARAM_BYTES, /* sent binary: bytea, or the binary form of the SQL's cast */
	ST_PARAM_INT64,
	ST_PARAM_BOOL,
} st_param_kind;

/* One bound parameter; DATA is borrowed for the duration of st_exec. */
typedef struct st_param {
	st_param_kind kind;
	const void *data;
	size_t len;
	int64_t i64;
} st_param;

#define ST_TEXT(s)     ((st_param){ST_PARAM_TEXT, (s), 0, 0})
#define ST_BYTES(p, n) ((st_param){ST_PARAM_BYTES, (p), (n), 0})
#define ST_INT64(v)    ((st_param){ST_PARAM_INT64, NULL, 0, (int64_t)(v)})
#define ST_BOOL(b)     ((st_param){ST_PARAM_BOOL, NULL, 0, (b) ? 1 : 0})

typedef struct st_row st_row;

/* Per row of a result; a negative return stops and fails the statement. */
typedef int (*st_row_cb)(void *cls, const st_row *row);

/*
 * Runs STMT with the NPARAMS parameters of PARAMS (must equal
 * STMT->nparams), calling CB (may be NULL) per returned row. Returns rows
 * returned (queries) or affected (commands), or a negative st_status; errors
 * are logged with PostgreSQL's SQLSTATE, message and detail.
 */
int st_exec(st_conn *c, const st_stmt *stmt, const st_param *params, size_t nparams, st_row_cb cb,
	    void *cls);

#define ST_EXEC(c, stmt, cb, cls, ...)                                                             \
	st_exec((c), (stmt), (const st_param[]){__VA_ARGS__},                                      \
		sizeof((const st_param[]){__VA_ARGS__}) / sizeof(st_param), (cb), (cls))

/*
 * Runs CB(p, CLS) with a pooled connection in pipeline mode for STMT, the
 * one statement the pipeline sends (prepared first). Whatever is still in
 * flight when CB returns is read and dropped. Returns CB's result, or a
 * negative st_status when no connection could be had.
 */
int st_run_pipeline(const st_stmt *stmt, st_pipe_cb cb, void *cls);

/* Sends the pipeline's statement with PARAMS (borrowed for the call). 0, or
 * a negative st_status (the pipeline is lost then). */
int st_pipe_send(st_pipe *p, const st_param *params, size_t nparams);

/* The result of the oldest statement in flight, rows to CB (may be NULL),
 * as st_exec returns it. */
int st_pipe_recv(st_pipe *p, st_row_cb cb, void *cls);

/*
 * Runs SQL, which may hold several statements and no parameters, with the
 * simple-query protocol. Only for migrations: DDL cannot be prepared.
 */
int st_exec_script(st_conn *c, const char *sql, const char *label);

/* Plans the transaction's next statements at every call, with the memory
 * their sorts need (store/groups.c): for statements whose optional
 * filters ("$3 IS NULL OR …") a generic plan would keep as filters. */
int st_plan_per_call(st_conn *c);

/* A timestamptz SQL expression X as "YYYY-MM-DDTHH:MM:SSZ" text, as every
 * reply shows times. */
#define ST_TS(x) "to_char((" x ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

/* A page of reports' JSON array (a level-2 group's, a user's): each
 * report of R (reports r, newest first) summarized, with EXTRA (more
 * "'name', value," pairs, or "") and its keyset cursor
 * "RECEIVED_AT_MICROS.ID"; '[]' when there is none. */
/* clang-format off */
#define ST_REPORT_SUMMARIES(EXTRA)                                                       \
	"coalesce(json_agg(json_build_object('id', r.id, 'report_id', r.report_id,"     \
	" 'received_at', " ST_TS("r.received_at") ", 'user_id', r.user_id,"             \
	" 'app_version', r.app_version, 'os_version', r.os_version, 'device', r.device," \
	" 'kind', r.kind, 'duration_ms', r.duration_ms, 'pending', r.pending, " EXTRA    \
	" 'cursor', (extract(epoch FROM r.received_at) * 1000000)::bigint::text"        \
	" || '.' || r.id) ORDER BY r.received_at DESC, r.id DESC), '[]')::text"
/* clang-format on */

/* Runs Q, whose one value is text (the JSON of a reply): 1 with a
 * malloc'ed copy in *OUT (caller frees), 0 when there is no row or the
 * value is NULL (*OUT NULL), or a negative st_status. */
int st_run_text(st_conn *c, const st_stmt *q, const st_param *params, size_t n, char **out);

/* Appends ITEMS[0..N) (NULL items are SQL NULLs; LENS NULL means strlen)
 * to W as a one-dimensional text[] in array_recv's form, to be sent as
 * ST_BYTES: the JSON or user text inside needs no quoting or escaping,
 * unlike in the text form, and the statement casts it to other element
 * types. Sets W->failed on an item too long for the format. */
void st_wire_text_array(cm_buf *w, const char *const *items, const size_t *lens, size_t n);

/* NULL for SQL NULL; valid until the row callback returns. */
const char *st_row_text(const st_row *row, int col);
/* Copies column COL into OUT (CAP bytes, NUL-terminated); -1 when NULL or
 * longer than CAP - 1. */
int st_row_copy(const st_row *row, int col, char *out, size_t cap);
/* 0 / false for NULL. */
int64_t st_row_int64(const st_row *row, int col);
/* A row callback: column 0 as st_row_int64 into the int64_t CLS points to. */
int st_read_int64(void *cls, const st_row *row);
bool st_row_bool(const st_row *row, int col);
/* A row callback: column 0 as st_row_bool into the bool CLS points to. */
int st_read_bool(void *cls, const st_row *row);
/* Decodes a bytea column into OUT; returns its length, or -1 when NULL or
 * not exactly LEN bytes. */
int st_row_bytes(const st_row *row, int col, uint8_t *out, size_t len);

/* How schema_migrations differs from a list of known versions: its
 * highest version, its lowest not in the list, the list's lowest not in
 * it (0 for none or no rows). */
typedef struct st_schema_delta {
	int64_t at, unknown, missing;
} st_schema_delta;

/* Fills OUT for KNOWN[0..N) (ascending) on C, where schema_migrations
 * exists: 0, or a negative st_status. */
int st_schema_diff(st_conn *c, const int *known, size_t n, st_schema_delta *out);

/*
 * Opens a lone connection outside the pool (migrations): *out_conn is freed
 * with st_conn_close. Returns 0, or -1 with the reason in ERR.
 */
int st_conn_open(const char *conninfo, st_conn **out_conn, char *err, size_t errlen);
void st_conn_close(st_conn *c);

/* BEGIN, COMMIT and ROLLBACK on a lone connection; st_status results. */
int st_conn_begin(st_conn *c);
int st_conn_commit(st_conn *c);
void st_conn_rollback(st_conn *c);

/* ---- Documents by their stacks (stacks.c, schema/018) ------------------ */

/* store/reports.h */
typedef struct st_document st_document;

/* DOC as a report row keeps it: its text with each stack replaced by one
 * 0x01 byte (*OUT_SKELETON), and its stacks' hashes in order as a uuid[]
 * literal (*OUT_STACKS); both malloc'ed, the caller frees. 0, or -1 when out
 * of memory or DOC's spans are out of order or bounds. */
int st_document_split(const st_document *doc, char **out_skeleton, char **out_stacks);

/* The distinct stacks of DOCS[0..N) (NULL entries skipped), sorted by
 * hash, as two binary text[] arrays appended to HASHES and BODIES: what
 * ingest_reports and update_report_symbols upsert. 0 or -1. */
int st_stacks_encode(const st_document *const *docs, size_t n, cm_buf *hashes, cm_buf *bodies);

#endif
