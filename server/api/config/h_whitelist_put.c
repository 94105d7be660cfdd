/*
 * h_whitelist_put.c — PUT /api/v1/apps/{app}/whitelist/{user_id} (admin
 * token): the user always uploads, without quota, until expires_at. The
 * body {"note","expires_at"} is optional, and so is each field; a PUT
 * replaces the entry (its created_at stays). 200 with the entry as GET
 * …/whitelist lists it: {"user_id","note","expires_at","created_at"}.
 */
#include <string.h>

#include "common/json.h"
#include "ingest/report.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "store/reports.h"

#define MAX_NOTE 4096

typedef struct put_tx {
	int64_t app_id;
	const char *user, *note, *expires_at;
	json_t *entry; /* the stored entry */
} put_tx;

static int take_entry(void *cls, const st_whitelist_entry *e)
{
	put_tx *t = cls;
	json_decref(t->entry);
	t->entry = json_pack("{s:s,s:o,s:o,s:s}", "user_id", e->user_id, "note",
			     e->has_note ? json_string(e->note) : json_null(), "expires_at",
			     e->expires_at[0] ? json_string(e->expires_at) : json_null(),
			     "created_at", e->created_at);
	return t->entry ? 0 : -1;
}

static int put_cb(st_conn *c, void *cls)
{
	put_tx *t = cls;
	return st_whitelist_put(c, t->app_id, t->user, t->note, t->expires_at, take_entry, t);
}

enum MHD_Result srv_h_whitelist_put(struct MHD_Connection *conn, srv_request *req)
{
	put_tx t = {.app_id = srv_req_app(req)->id, .user = srv_req_param(req, 1)};
	if (strlen(t.user) > ING_DIMENSION_MAX)
		return srv_reply_error(conn, ERR_BAD_FIELD, "user_id: longer than %d bytes",
				       ING_DIMENSION_MAX);
	/* Browsers and curl drop such segments from a URL, even encoded, so
	 * an entry stored under them could never be removed. */
	if (!strcmp(t.user, ".") || !strcmp(t.user, ".."))
		return srv_reply_error(conn, ERR_BAD_FIELD,
				       "user_id: \".\" and \"..\" cannot be sent in a URL path");
	size_t len = 0;
	const char *text = srv_req_body(req, &len);
	json_t *body = NULL;
	if (text && len) {
		char why[200];
		if (!(body = cm_json_parse(text, len, 8, why, sizeof why)))
			return srv_reply_error(conn, ERR_BAD_JSON, "%s", why);
		if (!json_is_object(body)) {
			json_decref(body);
			return srv_reply_error(conn, ERR_BAD_FIELD, "body: expected an object");
		}
	}
	const json_t *note = json_object_get(body, "note");
	const json_t *exp = json_object_get(body, "expires_at");
	const char *key;
	json_t *v;
	cm_err code = ERR_NONE;
	const char *why = NULL;
	json_object_foreach(body, key, v) if (strcmp(key, "note") && strcmp(key, "expires_at"))
		code = ERR_BAD_FIELD,
		why = "unknown field (note and expires_at are)";
	if (note && !json_is_null(note) &&
	    (!json_is_string(note) || json_string_length(note) > MAX_NOTE))
		code = ERR_BAD_FIELD, why = "note: expected a string of at most 4096 bytes";
	if (exp && !json_is_null(exp) &&
	    (!json_is_string(exp) || !ing_is_timestamp(json_string_value(exp))))
		code = ERR_BAD_FIELD, why = "expires_at: expected an RFC 3339 time";
	enum MHD_Result ret;
	if (code != ERR_NONE) {
		ret = srv_reply_error(conn, code, "%s", why);
	} else {
		t.note = json_string_value(note);
		t.expires_at = json_string_value(exp);
		int rc = st_run_tx("whitelist_put", put_cb, &t);
		if (rc < 0 || !t.entry) {
			json_decref(t.entry);
			ret = srv_reply_store_error(conn, rc < 0 ? rc : ST_HARD_ERROR);
		} else {
			ret = srv_reply_json(conn, 200, t.entry);
		}
	}
	json_decref(body);
	return ret;
}
