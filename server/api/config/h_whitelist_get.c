/*
 * h_whitelist_get.c — GET /api/v1/apps/{app}/whitelist?limit=&cursor=
 * (admin token): whitelisted users in user_id order,
 * {"whitelist":[{"user_id","note","expires_at","created_at"}…],
 *  "next_cursor"}; the cursor is the last user_id of the page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

#define DEFAULT_LIMIT 100
#define MAX_LIMIT     1000

typedef struct listing {
	int64_t app_id;
	const char *after;
	int64_t limit;
	json_t *items;
	char last[4097];
} listing;

static int add_entry(void *cls, const st_whitelist_entry *e)
{
	listing *l = cls;
	if ((int64_t)json_array_size(l->items) == l->limit)
		return 0; /* the extra row only says there is a next page */
	json_t *item = json_pack("{s:s,s:o,s:o,s:s}", "user_id", e->user_id, "note",
				 e->has_note ? json_string(e->note) : json_null(), "expires_at",
				 e->expires_at[0] ? json_string(e->expires_at) : json_null(),
				 "created_at", e->created_at);
	if (json_array_append_new(l->items, item) < 0)
		return -1;
	snprintf(l->last, sizeof l->last, "%s", e->user_id);
	return 0;
}

static int list_cb(st_conn *c, void *cls)
{
	listing *l = cls;
	json_array_clear(l->items);
	return st_whitelist_list(c, l->app_id, l->after, l->limit + 1, add_entry, l);
}

enum MHD_Result srv_h_whitelist_get(struct MHD_Connection *conn, srv_request *req)
{
	const char *limit = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit");
	const char *cursor = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "cursor");
	listing *l = calloc(1, sizeof *l);
	if (!l)
		return srv_reply_error(conn, ERR_INTERNAL, NULL);
	l->app_id = srv_req_app(req)->id;
	l->after = cursor ? cursor : "";
	l->limit = DEFAULT_LIMIT;
	if (limit) {
		char *end;
		errno = 0;
		long long v = strtoll(limit, &end, 10);
		if (errno || *end || v < 1 || v > MAX_LIMIT) {
			free(l);
			return srv_reply_error(conn, ERR_BAD_QUERY, "limit must be 1 to %d",
					       MAX_LIMIT);
		}
		l->limit = v;
	}
	l->items = json_array();
	int rc = l->items ? st_run_tx("whitelist_list", list_cb, l) : ST_HARD_ERROR;
	enum MHD_Result ret;
	if (rc < 0) {
		ret = srv_reply_store_error(conn, rc);
	} else {
		bool more = rc > l->limit;
		ret = srv_reply_json(conn, 200,
				     json_pack("{s:O,s:o}", "whitelist", l->items, "next_cursor",
					       more ? json_string(l->last) : json_null()));
	}
	json_decref(l->items);
	free(l);
	return ret;
}
