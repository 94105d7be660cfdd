/*
 * http.c — libmicrohttpd set-up, the request life cycle and dispatch; see
 * http.h for the sequence a request goes through.
 *
 * libmicrohttpd calls on_uri when a request line arrives (we allocate the
 * request there, so even requests refused before the handler get an access
 * log line), on_request once with the headers, once per body chunk and
 * then until a reply is queued, and on_completed at the end. Requests are
 * answered from libmicrohttpd's own threads, one per connection: handlers
 * block (on PostgreSQL, an ingest request on its batch's commit), and in a
 * pool a blocked thread holds back every other connection it took, a
 * client waiting for someone else's commit. srv_req_run_on_worker hands
 * slow work to the workers, which bound how much of it runs at once.
 */
#include "server/http/http.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/check.h"
#include "common/fd_io.h"
#include "common/json.h"
#include "common/log.h"
#include "common/utf8.h"
#include "server/http/auth.h"
#include "server/http/head_check.h"
#include "server/service/datadir.h"
#include "server/service/metrics.h"
#include "server/http/reply.h"
#include "server/http/routes.h"
#include "server/service/workers.h"

/* JSON nesting accepted in bodies (SPEC §4.1). */
#define JSON_MAX_DEPTH 64
/* Per-connection buffer: request line and headers must fit. */
#define CONNECTION_MEMORY (64u * 1024)
#define REQUEST_ID_MAX 64
/*
 * A refusal (no route, bad credentials) normally goes out before the body
 * is read. A client that sends a small body without Expect: 100-continue
 * writes all of it before reading, and would see the connection reset
 * under its feet instead of the answer: such bodies, up to this size and
 * framed by Content-Length, are read and dropped (never stored) first.
 */
#define REFUSE_AFTER_BODY_MAX (1u << 20)

struct srv_http {
	const srv_config *cfg;
	const srv_route *routes;
	size_t nroutes;
	struct MHD_Daemon *daemon;
	srv_workers *workers;
	atomic_uint active; /* requests between on_uri and on_completed */
	uint16_t port;
};

/* Per connection: which request replies on it belong to (reply.c). */
typedef struct conn_ctx {
	srv_request *current;
} conn_ctx;

struct srv_request {
	srv_http *http;
	struct MHD_Connection *conn;
	struct timespec start;
	size_t uri_len;
	char id[REQUEST_ID_MAX + 1];
	char method[16];
	char *path; /* the URL path as sent, for the log and 404s */
	/* The path as sent, still percent-encoded, split into route params:
	 * routing splits before decoding, so "%2F" inside a user id stays
	 * inside its segment instead of adding one. */
	char *scratch;
	srv_route_match match;
	int route_index; /* -1: no route */
	st_app app;
	bool has_app;
	bool started, body_done;
	/* Refusals wait for the body (see REFUSE_AFTER_BODY_MAX). */
	bool refuse_late;
	/* A refusal to send once the body is in (ERR_NONE: none); the body
	 * of a refused request is counted and dropped. */
	srv_refusal late;

	/* Body. */
	uint64_t limit, received, discarded;
	bool overflow;  /* went over limit: the rest is discarded */
	int write_errno; /* writing the temp file failed */
	char *mem;
	size_t mem_len, mem_cap;
	json_t *json;
	int fd;
	char file_path[PATH_MAX];

	/* Reply, for the access log. */
	unsigned status;
	uint64_t bytes;
};

/* ---- Accessors ----------------------------------------------------------- */

const char *srv_req_param(const srv_request *req, size_t i)
{
	return i < req->match.nparams ? req->match.params[i] : NULL;
}

const st_app *srv_req_app(const srv_request *req)
{
	return req->has_app ? &req->app : NULL;
}

const json_t *srv_req_json(const srv_request *req)
{
	return req->json;
}

const char *srv_req_body(const srv_request *req, size_t *out_len)
{
	*out_len = req->mem_len;
	return req->mem ? req->mem : "";
}

const char *srv_req_body_path(const srv_request *req, uint64_t *out_size)
{
	*out_size = req->received;
	return req->file_path;
}

const srv_config *srv_req_config(const srv_request *req)
{
	return req->http->cfg;
}

const char *srv_req_id(const srv_request *req)
{
	return req->id;
}

static srv_request *request_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn_ctx *cc = info ? info->socket_context : NULL;
	return cc ? cc->current : NULL;
}

static const char *reply_request_id(struct MHD_Connection *conn)
{
	srv_request *req = request_of(conn);
	return req ? req->id : NULL;
}

/* Kept for the access log. */
static void reply_queued(struct MHD_Connection *conn, unsigned status, uint64_t bytes)
{
	srv_request *req = request_of(conn);
	if (req) {
		req->status = status;
		req->bytes = bytes;
	}
}

static const srv_reply_hooks reply_hooks = {reply_request_id, reply_queued};

/* ---- Work on the workers ------------------------------------------------- */

typedef struct worker_job {
	void (*work)(void *cls);
	void *cls;
	pthread_mutex_t lock;
	pthread_cond_t finished;
	bool done; /* under LOCK, which also makes what WORK wrote visible */
} worker_job;

static void run_job(void *arg)
{
	worker_job *job = arg;
	job->work(job->cls);
	pthread_mutex_lock(&job->lock);
	job->done = true;
	pthread_cond_signal(&job->finished);
	pthread_mutex_unlock(&job->lock);
}

bool srv_req_run_on_worker(srv_request *req, void (*work)(void *cls), void *cls)
{
	worker_job job = {.work = work, .cls = cls};
	pthread_mutex_init(&job.lock, NULL);
	pthread_cond_init(&job.finished, NULL);
	bool queued = srv_workers_submit(req->http->workers, run_job, &job);
	pthread_mutex_lock(&job.lock);
	while (queued && !job.done)
		pthread_cond_wait(&job.finished, &job.lock);
	pthread_mutex_unlock(&job.lock);
	pthread_cond_destroy(&job.finished);
	pthread_mutex_destroy(&job.lock);
	return queued;
}

/* ---- The request life cycle ---------------------------------------------- */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	srv_http *http = cls;
	srv_request *req = calloc(1, sizeof *req);
	if (!req)
		return NULL;
	req->http = http;
	req->conn = conn;
	clock_gettime(CLOCK_MONOTONIC, &req->start);
	req->uri_len = strlen(uri);
	/* libmicrohttpd hands the handler a decoded path; keep the sent one,
	 * for routing and for what we show: a decoded "%2F" or "%20" would
	 * make the log and 404s show another path than the client's. */
	size_t path_len = strcspn(uri, "?");
	req->scratch = strndup(uri, path_len);
	req->path = strndup(uri, path_len);
	if (!req->scratch || !req->path) {
		free(req->scratch);
		free(req->path);
		free(req);
		return NULL;
	}
	req->fd = -1;
	req->route_index = -1;
	atomic_fetch_add(&http->active, 1);
	return req;
}

static bool valid_request_id(const char *id)
{
	size_t n = id ? strlen(id) : 0;
	if (n == 0 || n > REQUEST_ID_MAX)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' ||
		      *p == '.' || *p == ':'))
			return false;
	return true;
}

static void set_request_id(srv_request *req)
{
	const char *given = MHD_lookup_connection_value(
		req->conn, MHD_HEADER_KIND, "X-Request-Id");
	if (valid_request_id(given)) {
		memcpy(req->id, given, strlen(given) + 1);
		return;
	}
	uint8_t raw[8];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(req->id, sizeof req->id, raw, sizeof raw);
}

/* Sends req->late, a route error or refused credentials. */
static enum MHD_Result refuse(srv_request *req)
{
	req->body_done = true;
	switch (req->late.err) {
	case ERR_METHOD_NOT_ALLOWED:
		return srv_reply_method_not_allowed(req->conn, req->match.allow);
	case ERR_NO_ROUTE:
		return srv_reply_error(req->conn, ERR_NO_ROUTE, "no endpoint %s",
				       req->path);
	default:
		return srv_reply_error(req->conn, req->late.err, "%s",
				       req->late.message);
	}
}

/* Checks the route's credentials, filling req->app or req->late. */
static bool authenticate(srv_request *req)
{
	const srv_route *route = req->match.route;
	if (req->match.app_param >= 0)
		req->has_app = srv_auth_app(req->conn,
					    req->match.params[req->match.app_param],
					    route->auth, &req->app, &req->late);
	else
		req->has_app = srv_auth_any(req->conn, route->auth, &req->app,
					    &req->late);
	return req->has_app;
}

static enum MHD_Result too_large(struct MHD_Connection *conn,
				 uint64_t declared, uint64_t limit)
{
	return srv_reply_error(conn, ERR_BODY_TOO_LARGE,
			       "body of %" PRIu64 " bytes exceeds the limit "
			       "of %" PRIu64 " bytes", declared, limit);
}

/* First call: route, limits, credentials, body set-up. */
static enum MHD_Result begin(srv_request *req, const char *url, const char *method,
			     const char *version)
{
	struct MHD_Connection *conn = req->conn;
	const srv_config *cfg = req->http->cfg;
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn_ctx *cc = info ? info->socket_context : NULL;
	if (cc)
		cc->current = req;
	set_request_id(req);
	snprintf(req->method, sizeof req->method, "%s", method);

	/* Framing two readers could read differently (a proxy in front
	 * taking one length, we another) is how requests get smuggled:
	 * nothing after it on this connection can be trusted. */
	srv_framing fr;
	srv_framing_read(conn, version, &fr);
	if (fr.err != ERR_NONE)
		return srv_reply_error_close(conn, fr.err, "%s", fr.why);
	uint64_t declared = fr.length;
	bool has_length = fr.has_length;
	/* Beyond any route's limit: too large, whatever the route. */
	uint64_t largest = cfg->max_upload > cfg->max_body ? cfg->max_upload
							  : cfg->max_body;
	if (has_length && declared > largest)
		return too_large(conn, declared, largest);

	if (req->uri_len > cfg->max_url)
		return srv_reply_error(conn, ERR_URI_TOO_LONG,
				       "request target of %zu bytes exceeds "
				       "%u", req->uri_len, cfg->max_url);
	/* Both forms: "\xC3%A9" is invalid as sent and valid decoded. */
	if (!cm_utf8_valid(url) || !cm_utf8_valid(req->path))
		return srv_reply_error(conn, ERR_BAD_QUERY, "request target: not valid UTF-8");
	char why[128];
	cm_err qerr = srv_query_check(conn, why, sizeof why);
	if (qerr != ERR_NONE)
		return srv_reply_error(conn, qerr, "%s", why);
	req->refuse_late = has_length && declared > 0 &&
			   declared <= REFUSE_AFTER_BODY_MAX &&
			   !MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_EXPECT);
	req->limit = cfg->max_body;

	const srv_route *routes = req->http->routes;
	cm_err err = srv_route_find(routes, req->http->nroutes, method, req->scratch, &req->match);
	if (err != ERR_NONE) {
		req->match.route = NULL;
		req->late.err = err;
		return req->refuse_late ? MHD_YES : refuse(req);
	}
	const srv_route *route = req->match.route;
	req->route_index = (int)(route - routes);
	if (!srv_route_decode_params(&req->match))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "request target: a path segment decodes to a NUL byte");

	if (route->body == SRV_BODY_FILE)
		req->limit = cfg->max_upload;
	if (has_length && declared > req->limit)
		return too_large(conn, declared, req->limit);
	/* Before any body byte is taken, whatever the framing: only a
	 * credential's holder gets a temp file or a buffer. */
	if (route->auth && !authenticate(req))
		return req->refuse_late ? MHD_YES : refuse(req);
	if (route->body == SRV_BODY_FILE) {
		req->fd = srv_datadir_upload_temp(cfg->data_dir, req->file_path,
						  sizeof req->file_path);
		if (req->fd < 0)
			return srv_reply_error(conn, ERR_STORAGE,
					       "cannot create a temp file for "
					       "the upload");
	}
	return MHD_YES;
}

static enum MHD_Result body_chunk(srv_request *req, const char *data,
				  size_t n)
{
	if (req->overflow || req->write_errno) {
		/* A client that keeps sending far beyond the limit after
		 * being told nothing is cut off rather than read forever. */
		req->discarded += n;
		return req->discarded > req->limit ? MHD_NO : MHD_YES;
	}
	if (n > req->limit - req->received) {
		req->overflow = true;
		if (req->fd >= 0 && ftruncate(req->fd, 0) < 0)
			req->write_errno = errno;
		free(req->mem);
		req->mem = NULL;
		req->mem_len = 0;
		return MHD_YES;
	}
	req->received += n;
	if (req->late.err != ERR_NONE)
		return MHD_YES; /* to be refused: read and dropped */
	switch (req->match.route->body) {
	case SRV_BODY_NONE:
		break;
	case SRV_BODY_FILE:
		if (cm_write_all(req->fd, data, n) < 0) {
			req->write_errno = errno;
			/* A full disk is freed now, not when the client is
			 * done sending: other uploads and symcaches need it. */
			if (ftruncate(req->fd, 0) < 0)
				cm_log(CM_ERROR, "%s: truncating the upload: %s", req->id,
				       strerror(errno));
		}
		break;
	case SRV_BODY_MEMORY:
	case SRV_BODY_JSON:
		if (req->mem_len + n + 1 > req->mem_cap) {
			size_t cap = req->mem_cap ? req->mem_cap : 4096;
			while (cap < req->mem_len + n + 1)
				cap *= 2;
			char *grown = realloc(req->mem, cap);
			if (!grown)
				return MHD_NO;
			req->mem = grown;
			req->mem_cap = cap;
		}
		memcpy(req->mem + req->mem_len, data, n);
		req->mem_len += n;
		req->mem[req->mem_len] = '\0';
		break;
	}
	return MHD_YES;
}

/* The whole body is in: check it, then call the handler. */
static enum MHD_Result finish_body(srv_request *req)
{
	struct MHD_Connection *conn = req->conn;
	req->body_done = true;
	if (req->overflow)
		return srv_reply_error(conn, ERR_BODY_TOO_LARGE,
				       "body exceeds the limit of %" PRIu64
				       " bytes", req->limit);
	if (req->write_errno)
		return srv_reply_error(conn, cm_err_storage(req->write_errno),
				       "cannot store the upload: %s", strerror(req->write_errno));
	if (req->match.route->body == SRV_BODY_JSON) {
		if (req->mem_len == 0)
			return srv_reply_error(conn, ERR_EMPTY_BODY, NULL);
		char msg[256];
		req->json = cm_json_parse(req->mem, req->mem_len,
					  JSON_MAX_DEPTH, msg, sizeof msg);
		if (!req->json)
			return srv_reply_error(conn, ERR_BAD_JSON, "%s", msg);
	}
	return MHD_YES;
}

static enum MHD_Result dispatch(srv_request *req)
{
	if (!req->body_done && req->late.err != ERR_NONE)
		return refuse(req);
	if (!req->body_done) {
		enum MHD_Result r = finish_body(req);
		if (r != MHD_YES || req->status)
			return r;
	}
	/* A JSON route's handler is given its parsed body (http.h). */
	if (NEVER(req->match.route->body == SRV_BODY_JSON && !req->json))
		return srv_reply_error(req->conn, ERR_INTERNAL, NULL);
	enum MHD_Result r = req->match.route->handler(req->conn, req);
	if (r == MHD_YES && !req->status) {
		cm_log(CM_BUG, "%s: handler of %s %s did not reply",
		       req->id, req->method,
		       req->match.route->pattern);
		return srv_reply_error(req->conn, ERR_INTERNAL, NULL);
	}
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	(void)cls;
	(void)conn;
	srv_request *req = *req_cls;
	if (!req)
		return MHD_NO; /* on_uri ran out of memory */
	if (!req->started) {
		req->started = true;
		return begin(req, url, method, version);
	}
	if (*upload_data_size > 0) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		return body_chunk(req, upload_data, n);
	}
	return dispatch(req);
}

static double elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static const char *termination(enum MHD_RequestTerminationCode toe)
{
	switch (toe) {
	case MHD_REQUEST_TERMINATED_COMPLETED_OK: return NULL;
	case MHD_REQUEST_TERMINATED_WITH_ERROR: return "error";
	case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "timeout";
	case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "shutdown";
	case MHD_REQUEST_TERMINATED_READ_ERROR: return "read error";
	case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "client abort";
	}
	return "unknown";
}

/* Copies S for a log line: no spaces or control characters, bounded. */
static void log_safe(char *out, size_t cap, const char *s)
{
	size_t n = 0;
	for (; s && *s && n + 1 < cap; s++)
		out[n++] = (*s > ' ' && *s < 127) ? *s : '?';
	if (n == 0 && cap > 1)
		out[n++] = '-';
	out[n] = '\0';
}

static void on_completed(void *cls, struct MHD_Connection *conn,
			 void **req_cls, enum MHD_RequestTerminationCode toe)
{
	srv_http *http = cls;
	srv_request *req = *req_cls;
	if (!req)
		return;
	const union MHD_ConnectionInfo *info = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn_ctx *cc = info ? info->socket_context : NULL;
	if (cc && cc->current == req)
		cc->current = NULL;

	double ms = elapsed_ms(&req->start);
	char method[sizeof req->method], path[256];
	log_safe(method, sizeof method, req->method);
	log_safe(path, sizeof path, req->path);
	const char *why = termination(toe);
	/* A terminal watching `make run` would see nothing else; the
	 * metrics count every request either way. */
	if (http->cfg->access_log)
		cm_log(CM_INFO,
		       "access method=%s path=%s status=%u bytes=%" PRIu64 " ms=%.1f id=%s%s%s",
		       method, path, req->status, req->bytes, ms, req->id[0] ? req->id : "-",
		       why ? " aborted=" : "", why ? why : "");
	srv_metrics_request(req->route_index, req->status, ms / 1e3);

	json_decref(req->json);
	free(req->mem);
	if (req->fd >= 0) {
		/* Closing drops the lock; the file goes first so start-up
		 * cleaning never races a live writer. */
		srv_datadir_upload_remove(req->file_path);
		close(req->fd);
	}
	free(req->path);
	free(req->scratch);
	free(req);
	*req_cls = NULL;
	atomic_fetch_sub(&http->active, 1);
}

static void on_connection(void *cls, struct MHD_Connection *conn,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	(void)cls;
	(void)conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = calloc(1, sizeof(conn_ctx));
	} else {
		free(*socket_context);
		*socket_context = NULL;
	}
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	size_t n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	cm_log(CM_WARN, "http: %s", line);
}

/* ---- Start and stop ------------------------------------------------------ */

srv_http *srv_http_start(const srv_config *cfg, const srv_route *routes, size_t nroutes)
{
	srv_http *http = calloc(1, sizeof *http);
	if (!http)
		return NULL;
	http->cfg = cfg;
	http->routes = routes;
	http->nroutes = nroutes;
	srv_reply_set_hooks(&reply_hooks);
	http->workers = srv_workers_start(cfg->workers);
	if (!http->workers) {
		free(http);
		return NULL;
	}
	char port[8];
	snprintf(port, sizeof port, "%u", cfg->listen_port);
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				 .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai = NULL;
	int gai = getaddrinfo(cfg->listen_host, port, &hints, &ai);
	if (gai != 0) {
		cm_log(CM_ERROR, "http: cannot resolve %s: %s",
		       cfg->listen_host, gai_strerror(gai));
		goto fail;
	}
	/* epoll serves many connections per thread: poll (the listening
	 * thread's only) is what libmicrohttpd offers with a thread each. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	http->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, http,
		/* First, so that libmicrohttpd logs nothing on its own. */
		MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, http,
		MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout,
		MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
		MHD_OPTION_LISTENING_ADDRESS_REUSE, 1u,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, http,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, http,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, http,
		MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!http->daemon) {
		cm_log(CM_ERROR, "http: cannot listen on %s:%u",
		       cfg->listen_host, cfg->listen_port);
		goto fail;
	}
	const union MHD_DaemonInfo *di =
		MHD_get_daemon_info(http->daemon, MHD_DAEMON_INFO_BIND_PORT);
	http->port = di ? di->port : cfg->listen_port;
	return http;
fail:
	srv_workers_stop(http->workers);
	srv_workers_free(http->workers);
	free(http);
	return NULL;
}

uint16_t srv_http_port(const srv_http *http)
{
	return http->port;
}

void srv_http_stop(srv_http *http)
{
	MHD_socket listener = MHD_quiesce_daemon(http->daemon);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned left;
	while ((left = atomic_load(&http->active)) > 0 &&
	       elapsed_ms(&t0) < 1e3 * http->cfg->shutdown_timeout) {
		struct timespec tick = {0, 20 * 1000 * 1000};
		nanosleep(&tick, NULL);
	}
	if (left)
		cm_log(CM_WARN, "http: %u request%s still running after %us; "
		       "closing", left, left == 1 ? "" : "s",
		       http->cfg->shutdown_timeout);
	/* Requests still waiting for a worker get their job run and reply. */
	srv_workers_stop(http->workers);
	MHD_stop_daemon(http->daemon);
	if (listener != MHD_INVALID_SOCKET)
		close(listener);
	srv_workers_free(http->workers);
	free(http);
}
