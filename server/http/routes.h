/*
 * routes.h — the route table: method + path pattern → handler, the
 * credentials it takes and how its body is read. The server's one table
 * is server/api/route_table.c; srv_route_find matches a request against
 * any table (pure, no allocation), so it is unit-tested on its own.
 *
 * Patterns are literal segments and {name} segments, each {name} matching
 * one non-empty segment; a route whose pattern contains {app} is scoped to
 * that app (credentials are checked against it).
 */
#ifndef STALLSCOPE_SERVER_ROUTES_H
#define STALLSCOPE_SERVER_ROUTES_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/errors.h"

/* What a handler is given (http.h); routes only carry handlers. */
typedef struct srv_request srv_request;

/* A route's handler: queue a reply, return what reply.h returned. */
typedef enum MHD_Result (*srv_handler)(struct MHD_Connection *conn, srv_request *req);

/* How a route's request body is read (see http.h). */
typedef enum srv_body {
	SRV_BODY_NONE,   /* a body is read and ignored (up to max_body) */
	SRV_BODY_MEMORY, /* raw bytes in memory, up to max_body */
	SRV_BODY_JSON,   /* parsed JSON, up to max_body */
	SRV_BODY_FILE,   /* streamed to a temp file, up to max_upload */
} srv_body;

typedef struct srv_route {
	const char *method;
	const char *pattern;
	srv_handler handler;
	unsigned auth; /* 0 = public; else SRV_AUTH_* bits (auth.h) */
	srv_body body;
} srv_route;

#define SRV_MAX_PARAMS 4
#define SRV_MAX_SEGMENTS 16

typedef struct srv_route_match {
	const srv_route *route;
	size_t nparams;
	/* Into the PATH buffer given to srv_route_find, which
	 * srv_route_decode_params rewrites in place. */
	char *params[SRV_MAX_PARAMS];
	/* Index of {app} among params, or -1. */
	int app_param;
	/* On ERR_METHOD_NOT_ALLOWED: the methods that would match. */
	char allow[64];
} srv_route_match;

/*
 * Matches METHOD and PATH (a writable copy: its '/' become NULs and params
 * point into it) against TABLE (N routes). Returns ERR_NONE with *out
 * filled, ERR_NO_ROUTE, or ERR_METHOD_NOT_ALLOWED (out->allow filled).
 */
cm_err srv_route_find(const srv_route *table, size_t n, const char *method,
		      char *path, srv_route_match *out);

/*
 * Percent-decodes M's params in place, after srv_route_find split the path
 * as sent (so an encoded '/' stays inside its param); decoding only
 * shortens. A malformed escape stays as sent, as libmicrohttpd leaves it.
 * False when a param would hold a NUL byte, which C strings cannot carry.
 */
bool srv_route_decode_params(srv_route_match *m);

#endif
