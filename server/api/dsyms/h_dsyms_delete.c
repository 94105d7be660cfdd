/*
 * h_dsyms_delete.c — DELETE /api/v1/apps/{app}/dsyms/{uuid} (upload or
 * admin token): removes every slice of that UUID. Rows go first, in a
 * transaction, then their files: a crash in between leaves unreferenced
 * files, never a row pointing at a missing file. 204, or 404 when the app
 * has no debug file with that UUID.
 */
#include <stdlib.h>
#include <string.h>

#include "server/service/datadir.h"
#include "server/api/handlers.h"
#include "server/http/reply.h"
#include "server/service/symbols.h"
#include "symbolizer/symbolizer.h"

typedef struct deletion {
	int64_t app_id;
	char uuid[ST_UUID_LEN + 1];
	st_debug_file *rows;
	size_t n;
} deletion;

static int keep_row(void *cls, const st_debug_file *f)
{
	deletion *d = cls;
	st_debug_file *grown = realloc(d->rows, (d->n + 1) * sizeof *grown);
	if (!grown)
		return -1;
	d->rows = grown;
	d->rows[d->n++] = *f;
	return 0;
}

static int delete_tx(st_conn *c, void *cls)
{
	deletion *d = cls;
	d->n = 0;
	return st_debug_file_delete(c, d->app_id, d->uuid, keep_row, d);
}

enum MHD_Result srv_h_dsyms_delete(struct MHD_Connection *conn, srv_request *req)
{
	const char *text = srv_req_param(req, 1);
	uint8_t uuid[16];
	if (!sym_uuid_parse(text, uuid))
		return srv_reply_error(conn, ERR_BAD_REQUEST, "'%s' is not a UUID", text);
	deletion d = {.app_id = srv_req_app(req)->id};
	sym_uuid_format(uuid, d.uuid);
	int rc = st_run_tx("dsyms_delete", delete_tx, &d);
	if (rc < 0) {
		free(d.rows);
		return srv_reply_store_error(conn, rc);
	}
	srv_symbols_forget();
	const char *dir = srv_req_config(req)->data_dir;
	for (size_t i = 0; i < d.n; i++) {
		srv_datadir_remove(dir, d.rows[i].symcache_path);
		srv_datadir_remove(dir, d.rows[i].debug_path);
	}
	free(d.rows);
	if (rc == 0)
		return srv_reply_error(conn, ERR_NOT_FOUND, "no debug file with UUID %s", d.uuid);
	return srv_reply_empty(conn, 204);
}
