/*
 * http.h — the HTTP server: libmicrohttpd with a thread per connection,
 * the request life cycle and what handlers may ask of a request.
 *
 * Life of a request (http.c): the first callback refuses ambiguous framing
 * (head_check.h: 400 or 501, connection closed) and NUL or repeated query
 * arguments (400), finds the route (404/405, 414 beyond
 * STALLSCOPE_MAX_URL), refuses a declared Content-Length above the route's
 * limit (413) and checks credentials (401/403) before any byte of the body
 * is read, whatever its framing; only then does the body accumulate in memory
 * (SRV_BODY_MEMORY/JSON, up to STALLSCOPE_MAX_BODY) or streams into a temp
 * file under the data dir (SRV_BODY_FILE, up to STALLSCOPE_MAX_UPLOAD); once
 * it is complete the route's handler runs and queues a reply (reply.h),
 * handing slow work to the worker pool with srv_req_run_on_worker first if
 * it must. Every request ends with one access-log line and metrics.
 *
 * Memory: a srv_request and everything it points to (body, temp file)
 * belong to the server and are freed when the request completes; handlers
 * borrow them for the duration of a call.
 */
#ifndef STALLSCOPE_SERVER_HTTP_H
#define STALLSCOPE_SERVER_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/service/config.h"
#include "store/store.h"

typedef struct srv_request srv_request;
typedef struct srv_http srv_http;

typedef struct srv_route srv_route;

/*
 * Starts serving CFG's listen address with the NROUTES routes of ROUTES
 * (routes.h), a thread per connection, with CFG->workers workers; CFG and
 * ROUTES must outlive the server. Returns NULL (logged) when the address
 * cannot be bound.
 */
srv_http *srv_http_start(const srv_config *cfg, const srv_route *routes, size_t nroutes);

/* The port actually bound (useful with port 0). */
uint16_t srv_http_port(const srv_http *http);

/*
 * Graceful stop: stop accepting, give in-flight requests up to
 * CFG->shutdown_timeout seconds, finish deferred work, stop the threads,
 * free HTTP.
 */
void srv_http_stop(srv_http *http);

/* ---- What handlers may ask of a request ---------------------------------- */

/* The I-th {param} of the route pattern, percent-decoded. */
const char *srv_req_param(const srv_request *req, size_t i);

/* The app the credentials were checked for; NULL on routes without auth. */
const st_app *srv_req_app(const srv_request *req);

/* SRV_BODY_JSON: the parsed body (never NULL in the handler). */
const json_t *srv_req_json(const srv_request *req);

/* SRV_BODY_MEMORY/JSON: the raw bytes (NUL-terminated) and their length. */
const char *srv_req_body(const srv_request *req, size_t *out_len);

/* SRV_BODY_FILE: the temp file holding the body and its size. The file is
 * removed when the request ends; a handler may rename it away instead. */
const char *srv_req_body_path(const srv_request *req, uint64_t *out_size);

const srv_config *srv_req_config(const srv_request *req);

/* The request id echoed in X-Request-Id and the access log. */
const char *srv_req_id(const srv_request *req);

/*
 * Runs WORK(CLS) on the worker pool and returns once it has: the workers
 * bound how many slow jobs (building symcaches) run at once, while the
 * request's own thread has nothing else to serve. False, WORK not run,
 * once the server is stopping.
 */
bool srv_req_run_on_worker(srv_request *req, void (*work)(void *cls), void *cls);

#endif
