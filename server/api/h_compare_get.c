/*
 * h_compare_get.c — GET /api/v1/apps/{app}/compare?base=A&target=B&from=&to=
 * (admin token): every level-1 group with a report of version A or B on
 * those days, each side's affected and sampled user-days and rate, and the
 * verdict (SPEC §10.3; server/service/regression.h), sorted by how many
 * more user-days the target lost than the base at the target's size:
 * target affected − base affected × target sampled ÷ base sampled,
 * descending, then by key. Aggregates only (store/triage.h).
 */
#include <stdlib.h>
#include <string.h>

#include "server/api/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/http/reply.h"
#include "server/service/regression.h"
#include "store/triage.h"

typedef struct compared {
	json_t *obj; /* the group's reply object, owned */
	double score;
	const char *key; /* inside OBJ */
} compared;

typedef struct compare_tx {
	int64_t app_id;
	const char *base, *target, *from, *to;
	int64_t base_sampled, target_sampled;
	compared *rows;
	size_t n, cap;
} compare_tx;

static void rows_free(compare_tx *t)
{
	for (size_t i = 0; i < t->n; i++)
		json_decref(t->rows[i].obj);
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
}

static json_t *side(int64_t affected, int64_t sampled)
{
	json_t *rate = sampled > 0 ? json_real((double)affected / (double)sampled) : json_null();
	return json_pack("{s:I,s:I,s:o}", "affected", (json_int_t)affected, "sampled",
			 (json_int_t)sampled, "rate", rate);
}

static int add_row(void *cls, const st_compare_row *r)
{
	compare_tx *t = cls;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		compared *grown = realloc(t->rows, cap * sizeof *grown);
		if (!grown)
			return -1;
		t->rows = grown;
		t->cap = cap;
	}
	srv_proportion base = {r->base_affected, t->base_sampled};
	srv_proportion target = {r->target_affected, t->target_sampled};
	srv_verdict v = srv_compare_verdict(r->base_reports, base, target);
	json_t *frames = json_loads(r->frames ? r->frames : "[]", 0, NULL);
	json_t *obj = json_pack(
		"{s:s,s:o,s:o,s:o,s:s}", "key", r->key, "frames", frames ? frames : json_array(),
		"base", side(base.affected, base.sampled), "target",
		side(target.affected, target.sampled), "verdict", srv_verdict_name(v));
	if (!obj)
		return -1;
	double scale =
		t->base_sampled > 0 ? (double)t->target_sampled / (double)t->base_sampled : 0.0;
	t->rows[t->n++] = (compared){obj, (double)target.affected - (double)base.affected * scale,
				     json_string_value(json_object_get(obj, "key"))};
	return 0;
}

static int compare_cb(st_conn *c, void *cls)
{
	compare_tx *t = cls;
	rows_free(t);
	return st_compare(c, t->app_id, t->base, t->target, t->from, t->to, add_row, t,
			  &t->base_sampled, &t->target_sampled);
}

static int by_score(const void *a, const void *b)
{
	const compared *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return strcmp(x->key, y->key);
}

/* VALUE of query NAME when it is a version: present, 1 to 256 bytes. */
static const char *version_arg(struct MHD_Connection *conn, const char *name)
{
	const char *v = srv_query(conn, name);
	return v && v[0] && strlen(v) <= 256 ? v : NULL;
}

enum MHD_Result srv_h_compare_get(struct MHD_Connection *conn, srv_request *req)
{
	compare_tx t = {.app_id = srv_req_app(req)->id,
			.base = version_arg(conn, "base"),
			.target = version_arg(conn, "target")};
	if (!t.base || !t.target)
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "%s: expected an app version (1 to 256 bytes)",
				       t.base ? "target" : "base");
	srv_rc frc = srv_day_range_parse(conn, &t.from, &t.to);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	int rc = st_run_tx("compare", compare_cb, &t);
	if (rc < 0) {
		rows_free(&t);
		return srv_reply_store_error(conn, rc);
	}
	if (t.n > 1)
		qsort(t.rows, t.n, sizeof *t.rows, by_score);
	json_t *groups = json_array();
	for (size_t i = 0; i < t.n; i++)
		json_array_append(groups, t.rows[i].obj);
	rows_free(&t);
	return srv_reply_json(conn, 200, json_pack("{s:o}", "groups", groups));
}
