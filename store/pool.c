/*
 * pool.c — libpq connections, the pool, transactions with retry, and the
 * statement runner every other store file uses (see store.h, internal.h).
 *
 * PGconn and PGresult never leave this file. A connection found broken
 * (the server restarted, the network dropped) is reset the next time it is
 * handed out, which is how the server recovers from a database outage
 * without restarting: requests fail fast with ST_SOFT_ERROR while it is
 * down and succeed again once a reconnect works — on whichever host of a
 * multi-host URL then takes writes (target_session_attrs), after a
 * failover. A server that stops answering without closing the socket (its
 * machine hung or left the network) counts as lost too: see await_conn.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
/* Debian keeps libpq under postgresql/; its own includes are relative. */
#include <postgresql/libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/check.h"
#include "common/hex.h"
#include "common/log.h"
#include "store/internal.h"

/* Attempts of one transaction before a soft failure is reported. */
#define TX_ATTEMPTS 4
/* How long a request waits for a free connection. */
#define ACQUIRE_TIMEOUT_MS 10000
/*
 * After a failed connection attempt, others fail at once for this long:
 * with the database host unreachable every attempt would otherwise block a
 * server thread for connect_timeout.
 */
#define FAIL_FAST_MS 500
/*
 * A replica that refused a connection is left alone this long (its readers
 * go to the primary meanwhile): one attempt per interval, not one per
 * request.
 */
#define REPLICA_RETRY_MS 5000
/*
 * Attempts of a transaction on the replica: a session it ended (a restart)
 * fails the first, the second reconnects, and a replica that refuses that
 * is left alone for REPLICA_RETRY_MS. Its readers' answer to any failure is
 * the primary, so no more.
 */
#define REPLICA_ATTEMPTS 2
/* Connection failures are logged at most this often. */
#define LOG_EVERY_MS 5000
/*
 * A wait for the server silent this long asks whether the server is still
 * there: a machine that hung or dropped off the network closes no socket,
 * and without asking, a thread (the ingest writer: every ingest) would wait
 * for it for ever, past the failover to another host.
 */
#define PROBE_AFTER_MS 5000

struct st_conn {
	PGconn *pg;
	struct pool *owner;
	/* Statements prepared on this session; forgotten on reset. */
	const st_stmt **prepared;
	size_t n_prepared, cap_prepared;
	/* The server said the session ends (e.g. shutdown): reset first. */
	bool broken;
};

struct st_row {
	const PGresult *res;
	int row;
};

/* The primary's pool, and the read replica's when one is set up. */
typedef struct pool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	char *conninfo;
	const char *application_name;
	st_conn *conns;
	bool *busy;
	unsigned size, in_use;
	/* After a failed connection attempt, others fail at once for this
	 * long (ms): the primary's FAIL_FAST_MS, the replica's
	 * REPLICA_RETRY_MS, since its readers have the primary to go to. */
	int64_t fail_fast_ms;
	_Atomic int64_t last_connect_failure_ms;
	_Atomic int64_t last_failure_log_ms;
} pool_t;

static pool_t pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
		      .application_name = "stallscope",
		      .fail_fast_ms = FAIL_FAST_MS,
		      .last_connect_failure_ms = INT64_MIN / 2,
		      .last_failure_log_ms = INT64_MIN / 2};
static pool_t replica = {.lock = PTHREAD_MUTEX_INITIALIZER,
			 .application_name = "stallscope-read",
			 .fail_fast_ms = REPLICA_RETRY_MS,
			 .last_connect_failure_ms = INT64_MIN / 2,
			 .last_failure_log_ms = INT64_MIN / 2};

static atomic_uint_fast64_t error_count;

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* libpq messages end in a newline; log lines must not. */
static const char *chomp(char *buf, size_t cap, const char *msg)
{
	snprintf(buf, cap, "%s", msg ? msg : "");
	size_t n = strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = ' ';
	return buf;
}

static void on_notice(void *arg, const char *message)
{
	(void)arg;
	char buf[512];
	cm_log(CM_DEBUG, "db notice: %s", chomp(buf, sizeof buf, message));
}

static PGconn *connect_as(const char *conninfo, const char *application_name)
{
	/*
	 * Our defaults come first: with expand_dbname the URL's own settings
	 * (a later dbname entry) override them.
	 */
	const char *const keys[] = {"connect_timeout", "application_name",
				    "dbname", NULL};
	const char *const values[] = {"5", application_name, conninfo, NULL};
	PGconn *pg = PQconnectdbParams(keys, values, 1);
	if (pg)
		PQsetNoticeProcessor(pg, on_notice, NULL);
	return pg;
}

static PGconn *connect_db(const char *conninfo)
{
	return connect_as(conninfo, pool.application_name);
}

/* Whether the server PG is connected to answers a new connection within
 * 2 s: one busy with a long statement does, a frozen or unreachable one
 * not. Asking for a password is an answer: none is needed. */
static bool server_answers(PGconn *pg)
{
	const char *const keys[] = {"host", "port", "user", "dbname", "connect_timeout", NULL};
	const char *const values[] = {PQhost(pg), PQport(pg), PQuser(pg), PQdb(pg), "2", NULL};
	if (PQpingParams(keys, values, 0) != PQPING_NO_RESPONSE)
		return true;
	cm_log(CM_WARN,
	       "db: %s port %s answered nothing for %d ms, nor a new connection: "
	       "dropping the connection",
	       PQhost(pg), PQport(pg), PROBE_AFTER_MS);
	return false;
}

/*
 * Waits until C's next result can be read without blocking (1), or until
 * WAKE_FD (-1: none) is readable (0). The connection lost or its server
 * silent and not answering a probe: ST_SOFT_ERROR, with C broken.
 */
static int await_conn(st_conn *c, int wake_fd)
{
	for (;;) {
		if (PQconsumeInput(c->pg) != 1)
			break;
		if (!PQisBusy(c->pg))
			return 1;
		struct pollfd fds[2] = {{PQsocket(c->pg), POLLIN, 0}, {wake_fd, POLLIN, 0}};
		nfds_t nfds = wake_fd >= 0 ? 2 : 1;
		int rc = poll(fds, nfds, PROBE_AFTER_MS);
		if ((rc < 0 && errno != EINTR) || (rc == 0 && !server_answers(c->pg)))
			break;
		if (nfds == 2 && (fds[1].revents & POLLIN))
			return 0;
	}
	c->broken = true;
	return ST_SOFT_ERROR;
}

/* What PQexec would answer to the command SENT (0: not sent) — its first
 * error, else its last result — with the wait bounded by await_conn: NULL
 * when the connection is lost. */
static PGresult *result_of(st_conn *c, int sent)
{
	PGresult *keep = NULL;
	while (sent && await_conn(c, -1) == 1) {
		PGresult *res = PQgetResult(c->pg);
		if (!res)
			return keep;
		if (keep && PQresultStatus(keep) == PGRES_FATAL_ERROR) {
			PQclear(res);
		} else {
			PQclear(keep);
			keep = res;
		}
	}
	PQclear(keep);
	return NULL;
}

static void forget_prepared(st_conn *c)
{
	c->n_prepared = 0;
	c->broken = false;
}

static void note_connect_failure(pool_t *p, st_conn *c)
{
	atomic_fetch_add(&error_count, 1);
	int64_t now = now_ms();
	atomic_store(&p->last_connect_failure_ms, now);
	if (now - atomic_load(&p->last_failure_log_ms) >= LOG_EVERY_MS) {
		atomic_store(&p->last_failure_log_ms, now);
		char buf[512];
		cm_log(CM_WARN, "db: cannot connect%s: %s",
		       p == &replica ? " to the read replica" : "",
		       chomp(buf, sizeof buf, c->pg ? PQerrorMessage(c->pg) : "out of memory"));
	}
}

/* Makes C usable: connects or resets it when needed. */
static int ensure_connected(pool_t *p, st_conn *c)
{
	if (c->pg && PQstatus(c->pg) == CONNECTION_OK && !c->broken)
		return 0;
	if (now_ms() - atomic_load(&p->last_connect_failure_ms) < p->fail_fast_ms)
		return ST_SOFT_ERROR;
	if (c->pg)
		PQreset(c->pg);
	else
		c->pg = connect_as(p->conninfo, p->application_name);
	forget_prepared(c);
	if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
		note_connect_failure(p, c);
		return ST_SOFT_ERROR;
	}
	cm_log(CM_INFO, "db: connected%s (server %d)", p == &replica ? " to the read replica" : "",
	       PQserverVersion(c->pg));
	return 0;
}

static int pool_init(pool_t *p, const char *conninfo, unsigned pool_size)
{
	if (NEVER(pool_size == 0) || p->conns)
		return -1;
	p->conninfo = strdup(conninfo);
	p->conns = calloc(pool_size, sizeof *p->conns);
	p->busy = calloc(pool_size, sizeof *p->busy);
	if (!p->conninfo || !p->conns || !p->busy) {
		free(p->conninfo);
		free(p->conns);
		free(p->busy);
		p->conns = NULL;
		p->conninfo = NULL;
		return -1;
	}
	for (unsigned i = 0; i < pool_size; i++)
		p->conns[i].owner = p;
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->freed, &attr);
	pthread_condattr_destroy(&attr);
	p->size = pool_size;
	p->in_use = 0;
	return 0;
}

int st_init(const char *conninfo, unsigned pool_size)
{
	return pool_init(&pool, conninfo, pool_size);
}

int st_init_read(const char *conninfo, unsigned pool_size)
{
	return pool_init(&replica, conninfo, pool_size);
}

static void conn_free_members(st_conn *c)
{
	if (c->pg)
		PQfinish(c->pg);
	free(c->prepared);
	memset(c, 0, sizeof *c);
}

static void pool_free(pool_t *p)
{
	if (!p->conns)
		return;
	for (unsigned i = 0; i < p->size; i++)
		conn_free_members(&p->conns[i]);
	free(p->conns);
	free(p->busy);
	free(p->conninfo);
	pthread_cond_destroy(&p->freed);
	p->conns = NULL;
	p->busy = NULL;
	p->conninfo = NULL;
	p->size = p->in_use = 0;
}

void st_shutdown(void)
{
	pool_free(&pool);
	pool_free(&replica);
}

static void release(st_conn *c)
{
	pool_t *p = c->owner;
	pthread_mutex_lock(&p->lock);
	size_t i = (size_t)(c - p->conns);
	if (ALWAYS(i < p->size && p->busy[i])) {
		p->busy[i] = false;
		p->in_use--;
	}
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

static int acquire(pool_t *p, st_conn **out)
{
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ACQUIRE_TIMEOUT_MS / 1000;

	pthread_mutex_lock(&p->lock);
	if (NEVER(!p->conns)) { /* st_init first */
		pthread_mutex_unlock(&p->lock);
		return ST_HARD_ERROR;
	}
	while (p->in_use == p->size) {
		int e = pthread_cond_timedwait(&p->freed, &p->lock, &deadline);
		if (e == ETIMEDOUT && p->in_use == p->size) {
			pthread_mutex_unlock(&p->lock);
			cm_log(CM_WARN, "db: no free connection after %d ms",
			       ACQUIRE_TIMEOUT_MS);
			return ST_SOFT_ERROR;
		}
	}
	st_conn *c = NULL;
	for (unsigned i = 0; i < p->size; i++) {
		if (!p->busy[i]) {
			p->busy[i] = true;
			c = &p->conns[i];
			break;
		}
	}
	p->in_use++;
	pthread_mutex_unlock(&p->lock);

	/* Connecting happens outside the lock so one slow connect does not
	 * hold up the other threads. */
	int rc = ensure_connected(p, c);
	if (rc < 0) {
		release(c);
		return rc;
	}
	*out = c;
	return 0;
}

void st_get_pool_stats(st_pool_stats *out)
{
	pthread_mutex_lock(&pool.lock);
	out->size = pool.size;
	out->in_use = pool.in_use;
	pthread_mutex_unlock(&pool.lock);
	out->errors = atomic_load(&error_count);
}

static bool sqlstate_is(const char *state, const char *prefix)
{
	return state && !strncmp(state, prefix, strlen(prefix));
}

/* Classifies and logs a failed statement; RES may be NULL. */
static int fail(st_conn *c, const PGresult *res, const char *label)
{
	atomic_fetch_add(&error_count, 1);
	char msg[512], detail[512];
	const char *state =
		res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (PQstatus(c->pg) != CONNECTION_OK || c->broken) {
		cm_log(CM_WARN, "db: %s: connection lost: %s", label,
		       chomp(msg, sizeof msg, PQerrorMessage(c->pg)));
		return ST_SOFT_ERROR;
	}
	chomp(msg, sizeof msg,
	      res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
		  : PQerrorMessage(c->pg));
	chomp(detail, sizeof detail,
	      res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL);
	/* serialization_failure, deadlock_detected: the transaction lost a
	 * race and is worth running again. */
	if (sqlstate_is(state, "40001") || sqlstate_is(state, "40P01")) {
		cm_log(CM_INFO, "db: %s: SQLSTATE %s %s; retrying", label,
		       state, msg);
		return ST_SOFT_ERROR;
	}
	/* Connection exceptions and operator intervention (admin shutdown,
	 * crash recovery): the session is ending even if libpq has not seen
	 * the socket close yet. */
	if (sqlstate_is(state, "08") || sqlstate_is(state, "57P")) {
		c->broken = true;
		cm_log(CM_WARN, "db: %s: SQLSTATE %s %s", label, state, msg);
		return ST_SOFT_ERROR;
	}
	cm_log(CM_ERROR, "db: %s failed: SQLSTATE %s: %s%s%s", label,
	       state ? state : "?", msg, detail[0] ? " DETAIL: " : "",
	       detail);
	return ST_HARD_ERROR;
}

static int prepare(st_conn *c, const st_stmt *stmt)
{
	for (size_t i = 0; i < c->n_prepared; i++)
		if (c->prepared[i] == stmt)
			return 0;
	if (c->n_prepared == c->cap_prepared) {
		size_t cap = c->cap_prepared ? 2 * c->cap_prepared : 32;
		const st_stmt **p = realloc(c->prepared, cap * sizeof *p);
		if (!p) {
			cm_log(CM_ERROR, "db: out of memory preparing %s",
			       stmt->name);
			return ST_HARD_ERROR;
		}
		c->prepared = p;
		c->cap_prepared = cap;
	}
	PGresult *res =
		result_of(c, PQsendPrepare(c->pg, stmt->name, stmt->sql, stmt->nparams, NULL));
	int rc = 0;
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = fail(c, res, stmt->name);
	else
		c->prepared[c->n_prepared++] = stmt;
	PQclear(res);
	return rc;
}

static int collect(st_conn *c, PGresult *res, const char *label, st_row_cb cb,
		   void *cls)
{
	if (!res)
		return fail(c, NULL, label);
	switch (PQresultStatus(res)) {
	case PGRES_TUPLES_OK: {
		int n = PQntuples(res);
		for (int i = 0; i < n && cb; i++) {
			st_row row = {res, i};
			if (cb(cls, &row) < 0) {
				cm_log(CM_BUG, "db: %s: row %d rejected", label,
				       i);
				return ST_HARD_ERROR;
			}
		}
		return n;
	}
	case PGRES_COMMAND_OK: {
		const char *tuples = PQcmdTuples(res);
		return tuples[0] ? atoi(tuples) : 0;
	}
	default:
		return fail(c, res, label);
	}
}

/* PARAMS in libpq's form, into arrays of room ST_MAX_PARAMS; NUMS holds
 * the text of integers. */
typedef struct bound {
	const char *values[ST_MAX_PARAMS];
	int lengths[ST_MAX_PARAMS], formats[ST_MAX_PARAMS];
	char nums[ST_MAX_PARAMS][24];
} bound;

static void bind(bound *b, const st_param *params, size_t nparams)
{
	for (size_t i = 0; i < nparams; i++) {
		const st_param *p = &params[i];
		b->values[i] = NULL;
		b->lengths[i] = 0;
		b->formats[i] = 0;
		switch (p->kind) {
		case ST_PARAM_NULL:
			break;
		case ST_PARAM_TEXT: b->values[i] = p->data; break;
		case ST_PARAM_BYTES:
			assert(p->len <= INT32_MAX);
			b->values[i] = p->data;
			b->lengths[i] = (int)p->len;
			b->formats[i] = 1;
			break;
		case ST_PARAM_INT64:
			snprintf(b->nums[i], sizeof b->nums[i], "%" PRId64, p->i64);
			b->values[i] = b->nums[i];
			break;
		case ST_PARAM_BOOL: b->values[i] = p->i64 ? "t" : "f"; break;
		}
	}
}

int st_exec(st_conn *c, const st_stmt *stmt, const st_param *params, size_t nparams, st_row_cb cb,
	    void *cls)
{
	if (NEVER(nparams != (size_t)stmt->nparams || nparams > ST_MAX_PARAMS))
		return ST_HARD_ERROR;
	int rc = prepare(c, stmt);
	if (rc < 0)
		return rc;
	bound b;
	bind(&b, params, nparams);
	PGresult *res = result_of(c, PQsendQueryPrepared(c->pg, stmt->name, (int)nparams, b.values,
							 b.lengths, b.formats, 0));
	rc = collect(c, res, stmt->name, cb, cls);
	PQclear(res);
	return rc;
}

int st_exec_script(st_conn *c, const char *sql, const char *label)
{
	PGresult *res = result_of(c, PQsendQuery(c->pg, sql));
	int rc = collect(c, res, label, NULL, NULL);
	PQclear(res);
	return rc < 0 ? rc : 0;
}

int st_conn_begin(st_conn *c)
{
	return st_exec_script(c, "BEGIN", "BEGIN");
}

int st_conn_commit(st_conn *c)
{
	PGresult *res = result_of(c, PQsendQuery(c->pg, "COMMIT"));
	int rc = collect(c, res, "COMMIT", NULL, NULL);
	/* COMMIT of a transaction that had failed answers ROLLBACK. */
	if (rc >= 0 && strcmp(PQcmdStatus(res), "COMMIT") != 0) {
		cm_log(CM_BUG, "db: COMMIT answered %s", PQcmdStatus(res));
		rc = ST_HARD_ERROR;
	}
	PQclear(res);
	return rc < 0 ? rc : 0;
}

void st_conn_rollback(st_conn *c)
{
	if (PQstatus(c->pg) != CONNECTION_OK || c->broken)
		return;
	PQclear(result_of(c, PQsendQuery(c->pg, "ROLLBACK")));
}

/* BEGIN_SQL NULL: each statement commits on its own. */
static int run(pool_t *p, const char *name, const char *begin_sql, int attempts, st_tx_cb cb,
	       void *cls)
{
	for (int attempt = 1;; attempt++) {
		st_conn *c;
		int rc = acquire(p, &c);
		if (rc < 0)
			return rc;
		rc = begin_sql ? st_exec_script(c, begin_sql, "BEGIN") : 0;
		if (rc >= 0) {
			rc = cb(c, cls);
			if (begin_sql && rc >= 0) {
				int crc = st_conn_commit(c);
				if (crc < 0)
					rc = crc;
			} else if (begin_sql) {
				st_conn_rollback(c);
			}
		}
		release(c);
		if (rc != ST_SOFT_ERROR || attempt == attempts) {
			if (rc == ST_SOFT_ERROR && attempts > 1)
				cm_log(CM_WARN, "db: transaction %s gave up after %d attempts",
				       name, attempt);
			return rc;
		}
	}
}

int st_run_tx(const char *name, st_tx_cb cb, void *cls)
{
	return run(&pool, name, "BEGIN", TX_ATTEMPTS, cb, cls);
}

int st_run_autocommit(const char *name, st_tx_cb cb, void *cls)
{
	return run(&pool, name, NULL, TX_ATTEMPTS, cb, cls);
}

bool st_read_configured(void)
{
	return replica.conns != NULL;
}

int st_run_read_tx(const char *name, st_tx_cb cb, void *cls)
{
	if (!replica.conns)
		return ST_SOFT_ERROR;
	return run(&replica, name, "BEGIN READ ONLY", REPLICA_ATTEMPTS, cb, cls);
}

static int read_double(void *cls, const st_row *row)
{
	const char *v = st_row_text(row, 0);
	*(double *)cls = v ? strtod(v, NULL) : -1;
	return 0;
}

static int lag_tx(st_conn *c, void *cls)
{
	/* Nothing to replay while streaming is no lag, however old the last
	 * commit; otherwise the age of the last commit replayed. (The WAL
	 * receiver's status is hidden from a role without pg_read_all_stats;
	 * its pid is not.) */
	static const st_stmt q = {
		"replica_lag",
		"SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0"
		" WHEN EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE pid IS NOT NULL) AND"
		" pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
		" ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())"
		" END::float8",
		0};
	return st_exec(c, &q, NULL, 0, read_double, cls);
}

void st_get_read_stats(st_read_stats *out)
{
	memset(out, 0, sizeof *out);
	out->lag_seconds = -1;
	if (!replica.conns)
		return;
	out->configured = true;
	out->in_use =
		now_ms() - atomic_load(&replica.last_connect_failure_ms) >= replica.fail_fast_ms;
	if (out->in_use &&
	    run(&replica, "replica_lag", NULL, REPLICA_ATTEMPTS, lag_tx, &out->lag_seconds) < 0)
		out->in_use = false;
}

/* ---- Pipelines ------------------------------------------------------------ */

struct st_pipe {
	st_conn *c;
	const st_stmt *stmt;
	size_t inflight;
	bool lost; /* the session's state is unknown: results cannot be matched */
};

int st_run_pipeline(const st_stmt *stmt, st_pipe_cb cb, void *cls)
{
	st_conn *c;
	int rc = acquire(&pool, &c);
	if (rc < 0)
		return rc;
	rc = prepare(c, stmt);
	if (rc >= 0 && PQenterPipelineMode(c->pg) != 1)
		rc = fail(c, NULL, stmt->name);
	if (rc >= 0) {
		st_pipe p = {c, stmt, 0, false};
		rc = cb(&p, cls);
		while (p.inflight && !p.lost)
			st_pipe_recv(&p, NULL, NULL);
		if (p.lost || PQexitPipelineMode(c->pg) != 1)
			c->broken = true;
	}
	release(c);
	return rc;
}

int st_pipe_send(st_pipe *p, const st_param *params, size_t nparams)
{
	if (NEVER(nparams != (size_t)p->stmt->nparams || nparams > ST_MAX_PARAMS))
		return ST_HARD_ERROR;
	if (p->lost)
		return ST_SOFT_ERROR;
	bound b;
	bind(&b, params, nparams);
	/* The Sync ends the statement's implicit transaction: each statement
	 * commits on its own, as with st_run_autocommit. */
	if (PQsendQueryPrepared(p->c->pg, p->stmt->name, (int)nparams, b.values, b.lengths,
				b.formats, 0) != 1 ||
	    PQpipelineSync(p->c->pg) != 1) {
		p->lost = true;
		return fail(p->c, NULL, p->stmt->name);
	}
	p->inflight++;
	return 0;
}

int st_pipe_recv(st_pipe *p, st_row_cb cb, void *cls)
{
	if (NEVER(p->inflight == 0))
		return ST_HARD_ERROR;
	p->inflight--;
	if (p->lost)
		return ST_SOFT_ERROR;
	/* The statement's result, NULL, then the Sync's PGRES_PIPELINE_SYNC.
	 * A second NULL in a row means libpq has nothing more coming. */
	int rc = ST_HARD_ERROR, nulls = 0;
	bool answered = false;
	for (;;) {
		PGresult *res = await_conn(p->c, -1) == 1 ? PQgetResult(p->c->pg) : NULL;
		if (!res) {
			if (++nulls < 2 && PQstatus(p->c->pg) == CONNECTION_OK && !p->c->broken)
				continue;
			p->lost = true;
			return fail(p->c, NULL, p->stmt->name);
		}
		nulls = 0;
		ExecStatusType status = PQresultStatus(res);
		if (status == PGRES_PIPELINE_SYNC) {
			PQclear(res);
			return answered ? rc : ST_HARD_ERROR;
		}
		if (!answered) {
			rc = collect(p->c, res, p->stmt->name, cb, cls);
			answered = true;
		}
		PQclear(res);
	}
}

bool st_pipe_lost(const st_pipe *p)
{
	return p->lost;
}

int st_pipe_wait(st_pipe *p, int wake_fd)
{
	if (NEVER(p->inflight == 0))
		return ST_HARD_ERROR;
	if (p->lost)
		return ST_SOFT_ERROR;
	int rc = await_conn(p->c, wake_fd);
	if (rc < 0) {
		p->lost = true;
		return fail(p->c, NULL, p->stmt->name);
	}
	return rc;
}

static int ping_tx(st_conn *c, void *cls)
{
	(void)cls;
	static const st_stmt q = {"pool_ping", "SELECT 1", 0};
	return st_exec(c, &q, NULL, 0, NULL, NULL);
}

int st_ping(void)
{
	return st_run_autocommit("ping", ping_tx, NULL);
}

int st_conn_open(const char *conninfo, st_conn **out_conn, char *err,
		 size_t errlen)
{
	st_conn *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->pg = connect_db(conninfo);
	if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
		char buf[512];
		snprintf(err, errlen, "cannot connect to the database: %s",
			 chomp(buf, sizeof buf,
			       c->pg ? PQerrorMessage(c->pg)
				     : "out of memory"));
		st_conn_close(c);
		return -1;
	}
	*out_conn = c;
	return 0;
}

void st_conn_close(st_conn *c)
{
	if (!c)
		return;
	conn_free_members(c);
	free(c);
}

const char *st_row_text(const st_row *row, int col)
{
	if (PQgetisnull(row->res, row->row, col))
		return NULL;
	return PQgetvalue(row->res, row->row, col);
}

int st_row_copy(const st_row *row, int col, char *out, size_t cap)
{
	const char *v = st_row_text(row, col);
	if (!v || strlen(v) >= cap) {
		if (cap)
			out[0] = '\0';
		return -1;
	}
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

int64_t st_row_int64(const st_row *row, int col)
{
	const char *v = st_row_text(row, col);
	return v ? strtoll(v, NULL, 10) : 0;
}

int st_read_int64(void *cls, const st_row *row)
{
	*(int64_t *)cls = st_row_int64(row, 0);
	return 0;
}

bool st_row_bool(const st_row *row, int col)
{
	const char *v = st_row_text(row, col);
	return v && v[0] == 't';
}

int st_read_bool(void *cls, const st_row *row)
{
	*(bool *)cls = st_row_bool(row, 0);
	return 0;
}

int st_row_bytes(const st_row *row, int col, uint8_t *out, size_t len)
{
	/* Text-format bytea is "\x" and two hex digits per byte. */
	const char *v = st_row_text(row, col);
	if (!v || v[0] != '\\' || v[1] != 'x' || strlen(v + 2) != 2 * len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		int hi = cm_hex_digit((unsigned char)v[2 + 2 * i]);
		int lo = cm_hex_digit((unsigned char)v[3 + 2 * i]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)len;
}

/* ---- a listening connection ------------------------------------------------ */

struct st_listener {
	PGconn *pg;
	/* When the server last answered, and whether it has been asked to
	 * since (a LISTEN connection is quiet: see st_listener_wait). */
	int64_t heard_ms;
	bool asked;
};

void st_listener_close(st_listener *l)
{
	if (!l)
		return;
	PQfinish(l->pg);
	free(l);
}

st_listener *st_listener_open(const char *channel)
{
	st_listener *l = calloc(1, sizeof *l);
	if (!l || !pool.conninfo)
		goto fail;
	/* Its own name, so an operator (and the tests) can tell it apart. */
	l->pg = connect_as(pool.conninfo, "stallscope-listener");
	if (!l->pg || PQstatus(l->pg) != CONNECTION_OK)
		goto fail;
	char *id = PQescapeIdentifier(l->pg, channel, strlen(channel));
	char sql[256];
	snprintf(sql, sizeof sql, "LISTEN %s", id ? id : "");
	PQfreemem(id);
	PGresult *res = id ? PQexec(l->pg, sql) : NULL;
	bool ok = res && PQresultStatus(res) == PGRES_COMMAND_OK;
	PQclear(res);
	l->heard_ms = now_ms();
	if (ok)
		return l;
fail:
	atomic_fetch_add(&error_count, 1);
	st_listener_close(l);
	return NULL;
}

/* Reads what came: 1 when a notification did, 0 not, -1 lost. */
static int drain(st_listener *l)
{
	if (PQconsumeInput(l->pg) != 1)
		return -1;
	while (l->asked && !PQisBusy(l->pg)) {
		PGresult *res = PQgetResult(l->pg);
		if (!res) {
			l->asked = false;
			l->heard_ms = now_ms();
		}
		PQclear(res);
	}
	int got = 0;
	PGnotify *n;
	while ((n = PQnotifies(l->pg)) != NULL) {
		got = 1;
		l->heard_ms = now_ms();
		PQfreemem(n);
	}
	return got;
}

/* Silent for PROBE_AFTER_MS, the server is asked a question; silent as
 * long again, it is gone without having closed the socket (its machine
 * hung or left the network): ST_SOFT_ERROR, so the caller reconnects. */
static int probe(st_listener *l)
{
	if (now_ms() - l->heard_ms < PROBE_AFTER_MS)
		return 0;
	if (l->asked) {
		cm_log(CM_WARN, "db: %s port %s answered nothing for %d ms: listening elsewhere",
		       PQhost(l->pg), PQport(l->pg), PROBE_AFTER_MS);
		return ST_SOFT_ERROR;
	}
	if (PQsendQuery(l->pg, "SELECT 1") != 1)
		return ST_SOFT_ERROR;
	l->asked = true;
	l->heard_ms = now_ms();
	return 0;
}

int st_listener_wait(st_listener *l, int timeout_ms)
{
	int got = drain(l);
	if (got != 0)
		return got < 0 ? ST_SOFT_ERROR : 1;
	struct pollfd fd = {PQsocket(l->pg), POLLIN, 0};
	if (fd.fd < 0)
		return ST_SOFT_ERROR;
	int rc = poll(&fd, 1, timeout_ms);
	if (rc < 0)
		return errno == EINTR ? 0 : ST_SOFT_ERROR;
	if (rc == 0)
		return probe(l);
	got = drain(l);
	return got < 0 ? ST_SOFT_ERROR : got;
}
