/*
 * h_method_mappings_get.c — GET /api/v1/apps/{app}/method-mappings?limit=
 * (upload or admin token; SPEC §13): the app's Android method mappings,
 * newest first: {"mappings":[{"app_version","build","uuid","methods",
 * "file_size","created_at"}]}. At most 1,000: a release pipeline keeps
 * one per build, and the dSYM list pages through all debug files.
 */
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/http/reply.h"

typedef struct listing {
	int64_t app_id;
	unsigned limit;
	json_t *items;
} listing;

static int add_row(void *cls, const st_debug_file *f)
{
	listing *l = cls;
	json_t *item =
		json_pack("{s:s,s:s,s:s,s:I,s:I,s:s}", "app_version", f->app_version, "build",
			  f->build, "uuid", f->uuid, "methods", (json_int_t)f->functions,
			  "file_size", (json_int_t)f->file_size, "created_at", f->created_at);
	return json_array_append_new(l->items, item) < 0 ? -1 : 0;
}

static int list_tx(st_conn *c, void *cls)
{
	listing *l = cls;
	json_array_clear(l->items);
	return st_method_mapping_list(c, l->app_id, 0, l->limit, add_row, l);
}

enum MHD_Result srv_h_method_mappings_get(struct MHD_Connection *conn, srv_request *req)
{
	int64_t limit;
	srv_rc q = srv_query_limit(conn, 100, 1000, &limit);
	if (q != SRV_OK)
		return srv_rc_mhd(q);
	listing l = {.app_id = srv_req_app(req)->id, .limit = (unsigned)limit};
	if (!(l.items = json_array()))
		return srv_reply_error(conn, ERR_INTERNAL, "out of memory");
	int rc = st_run_tx("method_mappings_list", list_tx, &l);
	if (rc < 0) {
		json_decref(l.items);
		return srv_reply_store_error(conn, rc);
	}
	return srv_reply_json(conn, 200, json_pack("{s:o}", "mappings", l.items));
}
