/*
 * h_dsyms_missing_get.c — GET /api/v1/apps/{app}/dsyms/missing
 * ?images=app|system&limit=&cursor= (upload or admin token): the "missing
 * dSYM" alert: images that frames of stored reports fall in and that have
 * neither a debug file nor system symbols, most affected reports first.
 * images=app (the default) lists the app's own images, the ones its team
 * can upload; images=system the system images (docs/INGEST.md §System
 * images), which only an operator's `stallscope system-symbols import`
 * fills: {"missing":[{"uuid","arch","name","path","system","reports",
 * "app_versions","last_seen"}],"next_cursor"}: one row per UUID, NAME its
 * basename, PATH a full path reports gave it whenever one did, even if
 * others named it by basename (of several paths, the greatest; null when
 * reports gave its basename only), APP_VERSIONS the versions it was seen
 * in, newest first, LAST_SEEN an RFC 3339 time like every reply's. The
 * cursor is "REPORTS.UUID" (hex).
 */
#include <stdlib.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "store/groups.h"

typedef struct missing_tx {
	int64_t app_id, limit, after_reports;
	bool system;
	const char *after_uuid;
	char *json;
} missing_tx;

static int missing_cb(st_conn *c, void *cls)
{
	missing_tx *t = cls;
	free(t->json);
	t->json = NULL;
	/* One more than asked: whether there is a next page. */
	return st_dsyms_missing(c, t->app_id, t->system, t->after_reports, t->after_uuid,
				t->limit + 1, &t->json);
}

enum MHD_Result srv_h_dsyms_missing_get(struct MHD_Connection *conn, srv_request *req)
{
	missing_tx t = {.app_id = srv_req_app(req)->id};
	const char *images = srv_query(conn, "images");
	if (images && strcmp(images, "app") && strcmp(images, "system"))
		return srv_reply_error(conn, ERR_BAD_QUERY, "images: expected app or system");
	t.system = images && !strcmp(images, "system");
	srv_rc rc = srv_query_limit(conn, 100, 1000, &t.limit);
	if (rc != SRV_OK)
		return srv_rc_mhd(rc);
	const char *cursor = srv_query(conn, "cursor");
	char key[65];
	if (cursor && cursor[0]) {
		if (!srv_cursor_parse(cursor, true, &t.after_reports, key, sizeof key) ||
		    strlen(key) != 32)
			return srv_reply_error(conn, ERR_BAD_CURSOR, NULL);
		t.after_uuid = key;
	}
	int src = st_run_tx("dsyms_missing", missing_cb, &t);
	if (src < 0) {
		free(t.json);
		return srv_reply_store_error(conn, src);
	}
	return srv_reply_page(conn, "missing", t.json, t.limit);
}
