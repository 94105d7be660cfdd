/*
 * h_compare_get.c — GET /api/v1/apps/{app}/compare?base=A&target=B&from=&to=
 * (admin token): every level-1 group with a report of version A or B on
 * those days, its culprit, each side's affected and sampled user-days,
 * rate, reports and stall_ms, the test's p_value and the 95% interval of
 * the rates' difference (diff_ci, both null when a side has no sampled
 * user-day), and the verdict (SPEC §10.3; server/service/release_compare.h);
 * A equal to B is a 400. Sorted by how many
 * more user-days the target lost than the base at the target's size:
 * target affected − base affected × target sampled ÷ base sampled,
 * descending, then by key. Aggregates only (store/triage.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "server/api/groups/group_filter.h"
#include "server/api/handlers.h"
#include "server/http/pages.h"
#include "server/http/reply.h"
#include "server/service/folded_read.h"
#include "server/service/release_compare.h"
#include "store/triage.h"

typedef struct compared {
	char *key, *frames; /* owned; FRAMES is the groups row's JSON text */
	char *culprit;	    /* owned JSON text, NULL when the group has none */
	int64_t base_affected, target_affected;
	int64_t base_reports, target_reports, base_stall_ms, target_stall_ms;
	srv_release_compare_verdict verdict;
	double score;
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
	for (size_t i = 0; i < t->n; i++) {
		free(t->rows[i].key);
		free(t->rows[i].frames);
		free(t->rows[i].culprit);
	}
	free(t->rows);
	t->rows = NULL;
	t->n = t->cap = 0;
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
	srv_release_compare_proportion base = {r->base_affected, t->base_sampled};
	srv_release_compare_proportion target = {r->target_affected, t->target_sampled};
	double scale =
		t->base_sampled > 0 ? (double)t->target_sampled / (double)t->base_sampled : 0.0;
	compared row = {.key = strdup(r->key),
			.frames = strdup(r->frames ? r->frames : "[]"),
			.culprit = r->culprit ? strdup(r->culprit) : NULL,
			.base_affected = base.affected,
			.target_affected = target.affected,
			.base_reports = r->base_reports,
			.target_reports = r->target_reports,
			.base_stall_ms = r->base_stall_ms,
			.target_stall_ms = r->target_stall_ms,
			.verdict = srv_release_compare(r->base_reports, base, target),
			.score = (double)target.affected - (double)base.affected * scale};
	if (!row.key || !row.frames || (r->culprit && !row.culprit)) {
		free(row.key);
		free(row.frames);
		free(row.culprit);
		return -1;
	}
	t->rows[t->n++] = row;
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

static void write_side(cm_jw *w, const char *name, int64_t affected, int64_t sampled,
		       int64_t reports, int64_t stall_ms)
{
	cm_jw_key(w, name);
	cm_jw_object(w);
	cm_jw_key(w, "affected");
	cm_jw_int(w, affected);
	cm_jw_key(w, "sampled");
	cm_jw_int(w, sampled);
	cm_jw_key(w, "rate");
	if (sampled > 0)
		cm_jw_real(w, (double)affected / (double)sampled);
	else
		cm_jw_null(w);
	cm_jw_key(w, "reports");
	cm_jw_int(w, reports);
	cm_jw_key(w, "stall_ms");
	cm_jw_int(w, stall_ms);
	cm_jw_object_end(w);
}

/* The test's p and the difference's interval (SPEC §10.3), null when a
 * side has no sampled user-day. */
static void write_test(cm_jw *w, const compared *r, int64_t base_sampled, int64_t target_sampled)
{
	srv_release_compare_proportion base = {r->base_affected, base_sampled};
	srv_release_compare_proportion target = {r->target_affected, target_sampled};
	double ci[2];
	bool known = srv_release_compare_diff_ci(base, target, ci);
	cm_jw_key(w, "p_value");
	if (known)
		cm_jw_real(w, srv_release_compare_p(base, target));
	else
		cm_jw_null(w);
	cm_jw_key(w, "diff_ci");
	if (known) {
		cm_jw_array(w);
		cm_jw_real(w, ci[0]);
		cm_jw_real(w, ci[1]);
		cm_jw_array_end(w);
	} else {
		cm_jw_null(w);
	}
}

/* The reply, written as text: every group of two versions (10,000 at a
 * million reports) as jansson trees, their frames parsed and printed
 * again, cost more than the statement (docs/journal/performance.md). The frames
 * are the database's JSON text, copied as they are. */
static char *reply_text(const compare_tx *t, const char *as_of, size_t *len)
{
	cm_jw w = {0};
	cm_jw_object(&w);
	cm_jw_key(&w, "as_of");
	if (as_of[0])
		cm_jw_string(&w, as_of);
	else
		cm_jw_null(&w);
	cm_jw_key(&w, "groups");
	cm_jw_array(&w);
	for (size_t i = 0; i < t->n; i++) {
		const compared *r = &t->rows[i];
		cm_jw_object(&w);
		cm_jw_key(&w, "key");
		cm_jw_string(&w, r->key);
		cm_jw_key(&w, "frames");
		cm_jw_raw(&w, r->frames, strlen(r->frames));
		cm_jw_key(&w, "culprit");
		if (r->culprit)
			cm_jw_raw(&w, r->culprit, strlen(r->culprit));
		else
			cm_jw_null(&w);
		write_side(&w, "base", r->base_affected, t->base_sampled, r->base_reports,
			   r->base_stall_ms);
		write_side(&w, "target", r->target_affected, t->target_sampled, r->target_reports,
			   r->target_stall_ms);
		write_test(&w, r, t->base_sampled, t->target_sampled);
		cm_jw_key(&w, "verdict");
		cm_jw_string(&w, srv_release_compare_verdict_name(r->verdict));
		cm_jw_object_end(&w);
	}
	cm_jw_array_end(&w);
	cm_jw_object_end(&w);
	return cm_jw_finish(&w, len);
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
	if (!strcmp(t.base, t.target))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "target: must differ from base (%.64s): a version compared "
				       "with itself tells nothing",
				       t.base);
	srv_rc frc = srv_day_range_parse(conn, &t.from, &t.to);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	/* The facet rows it reads count every report committed before it. */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "compare", compare_cb, &t, as_of);
	if (rc < 0) {
		rows_free(&t);
		return srv_reply_store_error(conn, rc);
	}
	if (t.n > 1)
		qsort(t.rows, t.n, sizeof *t.rows, by_score);
	size_t len = 0;
	char *json = reply_text(&t, as_of, &len);
	rows_free(&t);
	if (!json)
		return srv_reply_error(conn, ERR_INTERNAL, NULL);
	return srv_reply_text(conn, 200, "application/json", json, len);
}
