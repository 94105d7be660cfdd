/* report_access.c — see report_access.h. */
#include <errno.h>
#include <stdlib.h>

#include "server/api/reports/report_access.h"
#include "server/http/pages.h"
#include "store/groups.h"

static int locate_cb(st_conn *c, void *cls)
{
	srv_report_loc *l = cls;
	return st_report_locate(c, l->app_id, l->id, l->day);
}

srv_rc srv_report_find(struct MHD_Connection *conn, srv_request *req, srv_report_loc *out)
{
	const char *text = srv_req_param(req, 0);
	char *end;
	errno = 0;
	long long id = strtoll(text, &end, 10);
	if (errno || *end || id <= 0 || text[0] < '0' || text[0] > '9')
		return srv_replied(srv_reply_error(conn, ERR_NOT_FOUND, "no such report"));
	out->id = id;
	out->app_id = srv_req_app(req)->id;
	int rc = st_run_tx("report_locate", locate_cb, out);
	if (rc < 0)
		return srv_replied(srv_reply_store_error(conn, rc));
	if (rc == 0)
		return srv_replied(srv_reply_error(conn, ERR_NOT_FOUND, "no such report"));
	return SRV_OK;
}

typedef struct page_tx {
	st_tx_cb cb;
	void *cls;
	srv_report_page *page;
} page_tx;

static int page_cb(st_conn *c, void *cls)
{
	page_tx *t = cls;
	free(t->page->json);
	t->page->json = NULL;
	return t->cb(c, t->cls);
}

enum MHD_Result srv_reply_report_page(struct MHD_Connection *conn, const char *name, st_tx_cb cb,
				      void *cls, srv_report_page *page, const char *missing)
{
	const char *cursor = srv_query(conn, "cursor");
	page->after_us = page->after_id = 0;
	if (cursor && cursor[0]) {
		char id[24];
		if (!srv_cursor_parse(cursor, false, &page->after_us, id, sizeof id) ||
		    (page->after_id = strtoll(id, NULL, 10)) <= 0)
			return srv_reply_error(conn, ERR_BAD_CURSOR, NULL);
	}
	page_tx t = {cb, cls, page};
	int src = st_run_tx(name, page_cb, &t);
	if (src < 0 || (src == 0 && missing)) {
		free(page->json);
		page->json = NULL;
		return src < 0 ? srv_reply_store_error(conn, src)
			       : srv_reply_error(conn, ERR_NOT_FOUND, "%s", missing);
	}
	char *json = page->json;
	page->json = NULL;
	return srv_reply_page(conn, "reports", json, page->limit);
}
