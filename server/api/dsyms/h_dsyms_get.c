/*
 * h_dsyms_get.c — GET /api/v1/apps/{app}/dsyms?limit=&cursor= (upload or
 * admin token): the app's debug files, newest first, keyset-paginated:
 * {"dsyms":[…],"next_cursor":"…"|null}. The cursor is the id of the last
 * row of the previous page, so pages stay stable while uploads arrive.
 */
#include <errno.h>
#include <stdlib.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT     1000

typedef struct listing {
	int64_t app_id;
	int64_t before;
	unsigned limit;
	json_t *items;
	int64_t last_id; /* of the last row kept on this page */
} listing;

static int add_row(void *cls, const st_debug_file *f)
{
	listing *l = cls;
	if (json_array_size(l->items) == l->limit)
		return 0; /* the extra row only says there is a next page */
	json_t *item = json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:I,s:I,s:s}", "uuid", f->uuid, "arch",
				 f->arch, "name", f->name, "kind", f->kind, "has_dwarf",
				 f->has_dwarf, "functions", (json_int_t)f->functions, "file_size",
				 (json_int_t)f->file_size, "symcache_size",
				 (json_int_t)f->symcache_size, "created_at", f->created_at);
	if (json_array_append_new(l->items, item) < 0)
		return -1;
	l->last_id = f->id;
	return 0;
}

static int list_tx(st_conn *c, void *cls)
{
	listing *l = cls;
	json_array_clear(l->items);
	return st_debug_file_list(c, l->app_id, l->before, l->limit + 1, add_row, l);
}

/* A positive decimal int64 from TEXT, or -1. */
static int64_t parse_positive(const char *text)
{
	if (!text || text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	char *end;
	long long v = strtoll(text, &end, 10);
	if (errno || *end || v <= 0)
		return -1;
	return v;
}

enum MHD_Result srv_h_dsyms_get(struct MHD_Connection *conn, srv_request *req)
{
	listing l = {.app_id = srv_req_app(req)->id, .limit = DEFAULT_LIMIT};
	const char *limit = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cursor = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cursor");
	if (limit) {
		int64_t v = parse_positive(limit);
		if (v < 1 || v > MAX_LIMIT)
			return srv_reply_error(conn, ERR_BAD_QUERY, "limit must be 1 to %d",
					       MAX_LIMIT);
		l.limit = (unsigned)v;
	}
	if (cursor && cursor[0]) {
		l.before = parse_positive(cursor);
		if (l.before < 0)
			return srv_reply_error(conn, ERR_BAD_CURSOR, NULL);
	}
	l.items = json_array();
	if (!l.items)
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	int rc = st_run_tx("dsyms_list", list_tx, &l);
	if (rc < 0) {
		json_decref(l.items);
		return srv_reply_store_error(conn, rc);
	}
	json_t *next = json_null();
	if ((unsigned)rc > l.limit)
		next = json_sprintf("%lld", (long long)l.last_id);
	return srv_reply_json(conn, 200,
			      json_pack("{s:o,s:o}", "dsyms", l.items, "next_cursor", next));
}
