/*
 * h_groups_get.c — GET /api/v1/apps/{app}/groups?level=&from=&to=&version=
 * &os_version=&device=&kind=&sort=count|users|last_seen|stall_ms&limit=&cursor=
 * (admin token): the app's stall groups, best first, keyset-paginated.
 * Without from/to and filters the counts are all-time totals; with them,
 * sums over the matching days, first/last seen those of the matching
 * reports (docs/STORAGE.md).
 */
#include <string.h>

#include "server/api/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/service/delta_folder.h"
#include "store/groups.h"

typedef struct page_tx {
	int64_t app_id;
	int level;
	st_group_filter f;
	st_group_sort sort;
	int64_t after_value;
	const char *after_key;
	int64_t limit;
	char *json;
} page_tx;

static int page_cb(st_conn *c, void *cls)
{
	page_tx *t = cls;
	free(t->json);
	return st_groups_page(c, t->app_id, t->level, &t->f, t->sort, t->after_value, t->after_key,
			      t->limit + 1, &t->json);
}

enum MHD_Result srv_h_groups_get(struct MHD_Connection *conn, srv_request *req)
{
	page_tx t = {.app_id = srv_req_app(req)->id, .level = 1};
	const char *level = srv_query(conn, "level");
	if (level && strcmp(level, "1") && strcmp(level, "2"))
		return srv_reply_error(conn, ERR_BAD_QUERY, "level: expected 1 or 2");
	if (level)
		t.level = level[0] - '0';
	const char *sort = srv_query(conn, "sort");
	if (!sort || !strcmp(sort, "count"))
		t.sort = ST_SORT_COUNT;
	else if (!strcmp(sort, "users"))
		t.sort = ST_SORT_USERS;
	else if (!strcmp(sort, "last_seen"))
		t.sort = ST_SORT_LAST_SEEN;
	else if (!strcmp(sort, "stall_ms"))
		t.sort = ST_SORT_STALL_MS;
	else
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "sort: expected count, users, last_seen or stall_ms");
	srv_rc rc = srv_group_page_parse(conn, &t.f, &t.limit);
	if (rc != SRV_OK)
		return srv_rc_mhd(rc);
	const char *cursor = srv_query(conn, "cursor");
	char key[65];
	if (cursor && cursor[0]) {
		if (!srv_cursor_parse(cursor, true, &t.after_value, key, sizeof key))
			return srv_reply_error(conn, ERR_BAD_CURSOR, NULL);
		t.after_key = key;
	}
	/* The day rows it reads count every report committed before it. */
	int src = srv_deltas_fold_then_read(t.app_id, "groups_page", page_cb, &t);
	if (src < 0) {
		free(t.json);
		return srv_reply_store_error(conn, src);
	}
	return srv_reply_page(conn, "groups", t.json, t.limit);
}
