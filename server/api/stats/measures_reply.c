/* measures_reply.c — see measures_reply.h. */
#include "server/api/stats/measures_reply.h"

#include <stdlib.h>

#include "server/http/reply.h"
#include "server/service/clock.h"
#include "server/service/retention.h"

typedef struct measures_tx {
	int64_t app_id;
	const st_measures_filter *f;
	srv_measures_read read;
	char oldest_kept[ING_DAY_LEN];
	char *json;
} measures_tx;

int srv_days_from(st_conn *c, int64_t app_id, const char **from, char buf[ING_DAY_LEN])
{
	if (*from)
		return 0;
	int rc = srv_retention_oldest_kept(c, app_id, srv_now(), buf);
	if (rc >= 0)
		*from = buf;
	return rc < 0 ? rc : 0;
}

static int measures_cb(st_conn *c, void *cls)
{
	measures_tx *t = cls;
	free(t->json);
	t->json = NULL;
	st_measures_filter f = *t->f;
	int rc = srv_days_from(c, t->app_id, &f.from, t->oldest_kept);
	return rc < 0 ? rc : t->read(c, t->app_id, &f, &t->json);
}

enum MHD_Result srv_measures_reply(struct MHD_Connection *conn, srv_request *req, const char *name,
				   srv_measures_read read, const st_measures_filter *f)
{
	measures_tx t = {.app_id = srv_req_app(req)->id, .f = f, .read = read};
	int rc = ST_SOFT_ERROR;
	if (st_read_configured())
		rc = st_run_read_tx(name, measures_cb, &t);
	if (rc < 0)
		rc = st_run_tx(name, measures_cb, &t);
	if (rc <= 0) {
		free(t.json);
		return srv_reply_store_error(conn, rc < 0 ? rc : ST_HARD_ERROR);
	}
	/* PostgreSQL's JSON text is spaced: written again compact, like
	 * every other reply. */
	json_t *body = json_loads(t.json, 0, NULL);
	free(t.json);
	return srv_reply_json(conn, 200, body);
}
