/*
 * h_groups_get.c — GET /api/v1/apps/{app}/groups?level=&from=&to=&version=
 * &os_version=&device=&kind=&sort=count|users|last_seen|stall_ms&limit=&cursor=
 * &status=open,resolved,ignored,regressed&q=TEXT (admin token): the app's
 * stall groups, best first, keyset-paginated; status= keeps those of the
 * named statuses (SPEC §11.1; a level-2 group has its level-1 group's);
 * q= those whose representative stacks have a frame whose function, file
 * or image contains TEXT, or whose culprit does (SPEC §10.7: at least 3
 * characters, case-insensitive; schema/046's search terms).
 * Without from/to and filters the counts are all-time totals; with them,
 * sums over the matching days, first/last seen those of the matching
 * reports (docs/STORAGE.md).
 */
#include <stdio.h>
#include <string.h>

#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/service/folded_read.h"
#include "store/groups.h"

typedef struct page_tx {
	int64_t app_id;
	int level;
	st_group_filter f;
	st_group_sort sort;
	int64_t after_value;
	const char *after_key;
	int64_t limit;
	const char *statuses; /* a text[] literal, NULL for any */
	char *json;
} page_tx;

static int page_cb(st_conn *c, void *cls)
{
	page_tx *t = cls;
	free(t->json);
	return st_groups_page(c, t->app_id, t->level, &t->f, t->sort, t->after_value, t->after_key,
			      t->limit + 1, t->statuses, &t->json);
}

/* "open,regressed" into OUT as the text[] literal "{open,regressed}";
 * false when a name is not a status. */
static bool parse_statuses(const char *query, char *out, size_t cap)
{
	static const char *const names[] = {"open", "resolved", "ignored", "regressed"};
	bool want[4] = {false};
	for (const char *p = query; *p;) {
		size_t n = strcspn(p, ","), k = 0;
		while (k < 4 && !(strlen(names[k]) == n && !strncmp(p, names[k], n)))
			k++;
		if (k == 4)
			return false;
		want[k] = true;
		p += n + (p[n] == ',');
	}
	size_t len = (size_t)snprintf(out, cap, "{");
	for (size_t k = 0; k < 4; k++)
		if (want[k])
			len += (size_t)snprintf(out + len, cap - len, "%s%s", len > 1 ? "," : "",
						names[k]);
	snprintf(out + len, cap - len, "}");
	return true;
}

/* The longest q= taken, in bytes: longer than any name worth typing. */
#define SEARCH_MAX 256

/* q= as an ILIKE pattern into OUT (2 * SEARCH_MAX + 3 bytes): '%' around
 * it, its own '%', '_' and '\' escaped. False when it has fewer than 3
 * characters (a trigram) or more than SEARCH_MAX bytes; UTF-8 it is (the
 * server refuses any query that is not before routing, server/http). */
static bool search_pattern(const char *q, char *out)
{
	size_t chars = 0, n = strlen(q);
	for (const unsigned char *p = (const unsigned char *)q; *p; p++)
		chars += (*p & 0xC0) != 0x80;
	if (n > SEARCH_MAX || chars < 3)
		return false;
	size_t k = 0;
	out[k++] = '%';
	for (const char *p = q; *p; p++) {
		if (*p == '%' || *p == '_' || *p == '\\')
			out[k++] = '\\';
		out[k++] = *p;
	}
	out[k++] = '%';
	out[k] = '\0';
	return true;
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
	const char *status = srv_query(conn, "status");
	char statuses[48];
	if (status && status[0] && !parse_statuses(status, statuses, sizeof statuses))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "status: expected open, resolved, ignored or regressed, "
				       "comma-separated");
	t.statuses = status && status[0] ? statuses : NULL;
	const char *q = srv_query(conn, "q");
	char pattern[2 * SEARCH_MAX + 3];
	if (q && !search_pattern(q, pattern))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "q: expected 3 to %d bytes of UTF-8, at least 3 characters",
				       SEARCH_MAX);
	t.f.search = q ? pattern : NULL;
	const char *cursor = srv_query(conn, "cursor");
	char key[65];
	if (cursor && cursor[0]) {
		if (!srv_cursor_parse(cursor, true, &t.after_value, key, sizeof key))
			return srv_reply_error(conn, ERR_BAD_CURSOR, NULL);
		t.after_key = key;
	}
	/* The day rows it reads count every report committed before it. */
	char as_of[SRV_AS_OF_LEN];
	int src = srv_read_folded(t.app_id, "groups_page", page_cb, &t, as_of);
	if (src < 0) {
		free(t.json);
		return srv_reply_store_error(conn, src);
	}
	json_t *body = srv_page_json("groups", t.json, t.limit);
	if (!body)
		return srv_reply_error(conn, ERR_INTERNAL, NULL);
	return srv_reply_json(conn, 200, srv_with_as_of(body, as_of));
}
