/*
 * h_report_get.c — GET /api/v1/reports/{id} (admin token of the report's
 * app): the full report: metadata, images with their status (found,
 * missing, malformed), every thread symbolized with a status per frame,
 * the representative stack, its group keys and identities, and whether it
 * waits for symbols. With demangle=full, Swift frames show the full form
 * (`swift demangle`'s, with modules and return types) instead of the
 * short one they are stored and grouped by (SPEC §3.6).
 */
#include <stdlib.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/api/reports/report_access.h"
#include "server/http/pages.h"
#include "store/groups.h"
#include "symbolizer/symbolizer.h"

typedef struct get_tx {
	srv_report_loc loc;
	char *json;
} get_tx;

static int get_cb(st_conn *c, void *cls)
{
	get_tx *t = cls;
	free(t->json);
	return st_report_json(c, t->loc.app_id, t->loc.day, t->loc.id, &t->json);
}

/* Sets KEY of OBJ to the full form of Swift name NAME; anything else
 * is left as it is. */
static void set_full(json_t *obj, const char *key, const char *name)
{
	if (!name || !sym_is_swift_symbol(name))
		return;
	char *full = sym_demangle(name, SYM_DEMANGLE_FULL);
	if (full)
		json_object_set_new(obj, key, json_string(full));
	free(full);
}

/* Every frame of FRAMES (a stored stack) in the full form. */
static void frames_full(json_t *frames)
{
	size_t i, k;
	json_t *fr, *entry;
	json_array_foreach(frames, i, fr)
	{
		if (json_object_get(fr, "hint_function"))
			set_full(fr, "hint_function",
				 json_string_value(json_object_get(fr, "symbol_hint")));
		json_array_foreach(json_object_get(fr, "frames"), k, entry)
		{
			set_full(entry, "function",
				 json_string_value(json_object_get(entry, "symbol")));
		}
	}
}

static void report_full(json_t *report)
{
	size_t i;
	json_t *thread;
	json_array_foreach(json_object_get(report, "threads"), i, thread)
		frames_full(json_object_get(thread, "frames"));
	frames_full(json_object_get(json_object_get(report, "stack"), "frames"));
}

enum MHD_Result srv_h_report_get(struct MHD_Connection *conn, srv_request *req)
{
	const char *demangle = srv_query(conn, "demangle");
	if (demangle && strcmp(demangle, "full") && strcmp(demangle, "short"))
		return srv_reply_error(conn, ERR_BAD_QUERY, "demangle: \"full\" or \"short\"");
	get_tx t = {0};
	srv_rc found = srv_report_find(conn, req, &t.loc);
	if (found != SRV_OK)
		return srv_rc_mhd(found);
	int rc = st_run_tx("report_get", get_cb, &t);
	if (rc < 0)
		return srv_reply_store_error(conn, rc);
	if (rc == 0) /* purged between the two reads */
		return srv_reply_error(conn, ERR_NOT_FOUND, "no such report");
	json_t *body = json_loads(t.json, 0, NULL);
	free(t.json);
	if (body && demangle && !strcmp(demangle, "full"))
		report_full(body);
	return srv_reply_json(conn, 200, body);
}
