/*
 * route_table.h — the server's routes: every endpoint, the credentials it
 * takes and how its body is read (a static table, nothing to free). The
 * HTTP server matches requests against it (server/http/routes.h).
 */
#ifndef STALLSCOPE_SERVER_API_ROUTE_TABLE_H
#define STALLSCOPE_SERVER_API_ROUTE_TABLE_H

#include <stddef.h>

#include "server/http/routes.h"

/* The server's table and its length. */
const srv_route *srv_routes(size_t *out_count);

#endif
