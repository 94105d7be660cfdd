/* folded_read.c — see folded_read.h. */
#include "server/service/folded_read.h"

#include <stdlib.h>

#include "server/service/delta_folder.h"
#include "store/groups.h"

typedef struct read_tx {
	int64_t app_id;
	st_tx_cb cb;
	void *cls;
	char *as_of;
} read_tx;

/* The as_of first: the reads after it see at least what it vouches for. */
static int read_cb(st_conn *c, void *cls)
{
	read_tx *t = cls;
	int rc = st_folded_as_of(c, t->app_id, t->as_of, SRV_AS_OF_LEN);
	return rc < 0 ? rc : t->cb(c, t->cls);
}

int srv_read_folded(int64_t app_id, const char *name, st_tx_cb cb, void *cls, char *as_of)
{
	read_tx t = {app_id, cb, cls, as_of};
	as_of[0] = '\0';
	/* Any failure there (down, lost, a query cancelled by its replay, a
	 * replica not yet at the schema this server reads during an upgrade;
	 * logged by the store) is answered from the primary: the reader sees
	 * no difference but a newer as_of. */
	if (st_read_configured()) {
		int rc = st_run_read_tx(name, read_cb, &t);
		if (rc >= 0)
			return rc;
		as_of[0] = '\0';
	}
	return srv_deltas_fold_then_read(app_id, name, read_cb, &t);
}

json_t *srv_with_as_of(json_t *body, const char *as_of)
{
	if (json_is_object(body))
		json_object_set_new(body, "as_of", as_of[0] ? json_string(as_of) : json_null());
	return body;
}

char *srv_json_text_with_as_of(char *json, const char *as_of)
{
	json_t *body = json ? json_loads(json, 0, NULL) : NULL;
	free(json);
	char *text =
		json_is_object(body) ? json_dumps(srv_with_as_of(body, as_of), JSON_COMPACT) : NULL;
	json_decref(body);
	return text;
}
