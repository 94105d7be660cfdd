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
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
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
	char *key;     /* owned */
	char *frames;  /* owned, the groups row's JSON text; NULL off the page */
	char *culprit; /* owned JSON text, NULL off the page or without one */
	int64_t base_affected, target_affected;
	int64_t base_reports, target_reports, base_stall_ms, target_stall_ms;
	srv_release_compare_verdict verdict;
	double score;
} compared;

/* Where a page starts: after the row of SCORE and KEY. */
typedef struct compare_after {
	double score;
	char key[65];
} compare_after;

typedef struct compare_tx {
	int64_t app_id;
	const char *base, *target, *from, *to;
	int64_t limit;		    /* -1: every row */
	const compare_after *after; /* NULL: from the first row */
	int64_t base_sampled, target_sampled;
	compared *rows; /* sorted once counted */
	size_t n, cap;
	size_t first, last; /* the page: rows[first] to rows[last - 1] */
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
			.base_affected = base.affected,
			.target_affected = target.affected,
			.base_reports = r->base_reports,
			.target_reports = r->target_reports,
			.base_stall_ms = r->base_stall_ms,
			.target_stall_ms = r->target_stall_ms,
			.verdict = srv_release_compare(r->base_reports, base, target),
			.score = (double)target.affected - (double)base.affected * scale};
	if (!row.key)
		return -1;
	t->rows[t->n++] = row;
	return 0;
}

static int order(double score_x, const char *key_x, double score_y, const char *key_y)
{
	if (score_x != score_y)
		return score_x < score_y ? 1 : -1;
	return strcmp(key_x, key_y);
}

static int by_score(const void *a, const void *b)
{
	const compared *x = a, *y = b;
	return order(x->score, x->key, y->score, y->key);
}

/* A cursor is "BITS.KEY": the row's score as the int64 of its bits (no
 * decimal rounding to lose a row to) and its key. */
static void cursor_of(const compared *r, char *out, size_t cap)
{
	int64_t bits;
	memcpy(&bits, &r->score, sizeof bits);
	snprintf(out, cap, "%" PRId64 ".%s", bits, r->key);
}

static bool cursor_parse(const char *text, compare_after *after)
{
	int64_t bits;
	if (!srv_cursor_parse(text, true, &bits, after->key, sizeof after->key))
		return false;
	memcpy(&after->score, &bits, sizeof bits);
	return isfinite(after->score);
}

static size_t first_after(const compare_tx *t, const compare_after *after)
{
	size_t i = 0;
	while (after && i < t->n &&
	       order(t->rows[i].score, t->rows[i].key, after->score, after->key) <= 0)
		i++;
	return i;
}

static int add_face(void *cls, const st_compare_face *f)
{
	compare_tx *t = cls;
	if (f->index >= t->last - t->first)
		return 0;
	compared *r = &t->rows[t->first + f->index];
	r->frames = strdup(f->frames ? f->frames : "[]");
	r->culprit = f->culprit ? strdup(f->culprit) : NULL;
	return r->frames && (!f->culprit || r->culprit) ? 0 : -1;
}

/* The page's keys (one at least) as a text[] literal (keys are hex:
 * nothing to quote). */
static char *page_keys(const compare_tx *t)
{
	size_t len = 2;
	for (size_t i = t->first; i < t->last; i++)
		len += strlen(t->rows[i].key) + 1;
	char *keys = malloc(len), *at = keys;
	if (!keys)
		return NULL;
	*at++ = '{';
	for (size_t i = t->first; i < t->last; i++) {
		size_t k = strlen(t->rows[i].key);
		memcpy(at, t->rows[i].key, k);
		at += k;
		*at++ = i + 1 < t->last ? ',' : '}';
	}
	*at = '\0';
	return keys;
}

/* Every group counted and sorted, then the frames of the page's rows
 * only: at 1,000,000 Android reports joining every group's frames cost
 * about a third of the statement (docs/journal/performance.md). */
static int compare_cb(st_conn *c, void *cls)
{
	compare_tx *t = cls;
	rows_free(t);
	int rc = st_compare(c, t->app_id, t->base, t->target, t->from, t->to, add_row, t,
			    &t->base_sampled, &t->target_sampled);
	if (rc < 0)
		return rc;
	if (t->n > 1)
		qsort(t->rows, t->n, sizeof *t->rows, by_score);
	t->first = first_after(t, t->after);
	t->last = t->limit < 0 || (size_t)t->limit > t->n - t->first ? t->n
								     : t->first + (size_t)t->limit;
	if (t->first == t->last)
		return rc;
	char *keys = page_keys(t);
	if (!keys)
		return -1;
	int frc = st_compare_faces(c, t->app_id, keys, add_face, t);
	free(keys);
	return frc < 0 ? frc : rc;
}

static void write_verdicts(cm_jw *w, const compare_tx *t)
{
	static const srv_release_compare_verdict all[] = {
		SRV_RELEASE_COMPARE_NEW, SRV_RELEASE_COMPARE_WORSE, SRV_RELEASE_COMPARE_BETTER,
		SRV_RELEASE_COMPARE_SAME};
	cm_jw_key(w, "verdicts");
	cm_jw_object(w);
	for (size_t v = 0; v < sizeof all / sizeof *all; v++) {
		int64_t n = 0;
		for (size_t i = 0; i < t->n; i++)
			n += t->rows[i].verdict == all[v];
		cm_jw_key(w, srv_release_compare_verdict_name(all[v]));
		cm_jw_int(w, n);
	}
	cm_jw_object_end(w);
}

static void write_side(cm_jw *w, cm_jw_real_memo *memo, const char *name, int64_t affected,
		       int64_t sampled, int64_t reports, int64_t stall_ms)
{
	cm_jw_key(w, name);
	cm_jw_object(w);
	cm_jw_key(w, "affected");
	cm_jw_int(w, affected);
	cm_jw_key(w, "sampled");
	cm_jw_int(w, sampled);
	cm_jw_key(w, "rate");
	if (sampled > 0)
		cm_jw_real_memoized(w, memo, (double)affected / (double)sampled);
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
static void write_test(cm_jw *w, cm_jw_real_memo *memo, const compared *r, int64_t base_sampled,
		       int64_t target_sampled)
{
	srv_release_compare_proportion base = {r->base_affected, base_sampled};
	srv_release_compare_proportion target = {r->target_affected, target_sampled};
	double ci[2];
	bool known = srv_release_compare_diff_ci(base, target, ci);
	cm_jw_key(w, "p_value");
	if (known)
		cm_jw_real_memoized(w, memo, srv_release_compare_p(base, target));
	else
		cm_jw_null(w);
	cm_jw_key(w, "diff_ci");
	if (known) {
		cm_jw_array(w);
		cm_jw_real_memoized(w, memo, ci[0]);
		cm_jw_real_memoized(w, memo, ci[1]);
		cm_jw_array_end(w);
	} else {
		cm_jw_null(w);
	}
}

/* One row of the reply. */
static void write_row(cm_jw *w, cm_jw_real_memo *memo, const compare_tx *t, const compared *r)
{
	cm_jw_object(w);
	cm_jw_key(w, "key");
	cm_jw_string(w, r->key);
	cm_jw_key(w, "frames");
	if (r->frames)
		cm_jw_raw(w, r->frames, strlen(r->frames));
	else
		cm_jw_raw(w, "[]", 2);
	cm_jw_key(w, "culprit");
	if (r->culprit)
		cm_jw_raw(w, r->culprit, strlen(r->culprit));
	else
		cm_jw_null(w);
	write_side(w, memo, "base", r->base_affected, t->base_sampled, r->base_reports,
		   r->base_stall_ms);
	write_side(w, memo, "target", r->target_affected, t->target_sampled, r->target_reports,
		   r->target_stall_ms);
	write_test(w, memo, r, t->base_sampled, t->target_sampled);
	cm_jw_key(w, "verdict");
	cm_jw_string(w, srv_release_compare_verdict_name(r->verdict));
	cm_jw_object_end(w);
}

/* The reply, written as text: every group of two versions (10,000 at a
 * million reports) as jansson trees, their frames parsed and printed
 * again, cost more than the statement (docs/journal/performance.md). The frames
 * are the database's JSON text, copied as they are. Rows FROM to FROM +
 * LIMIT (-1: to the end). */
static char *reply_text(const compare_tx *t, const char *as_of, size_t *len)
{
	cm_jw_real_memo *memo = calloc(1, sizeof *memo);
	if (!memo)
		return NULL;
	cm_jw w = {0};
	cm_jw_object(&w);
	cm_jw_key(&w, "as_of");
	if (as_of[0])
		cm_jw_string(&w, as_of);
	else
		cm_jw_null(&w);
	write_verdicts(&w, t);
	cm_jw_key(&w, "groups");
	cm_jw_array(&w);
	for (size_t i = t->first; i < t->last; i++)
		write_row(&w, memo, t, &t->rows[i]);
	cm_jw_array_end(&w);
	cm_jw_key(&w, "next_cursor");
	if (t->last < t->n && t->last > t->first) {
		char cursor[96];
		cursor_of(&t->rows[t->last - 1], cursor, sizeof cursor);
		cm_jw_string(&w, cursor);
	} else {
		cm_jw_null(&w);
	}
	cm_jw_object_end(&w);
	free(memo);
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
	if (frc == SRV_OK)
		frc = srv_query_limit(conn, -1, 1000, &t.limit);
	if (frc != SRV_OK)
		return srv_rc_mhd(frc);
	const char *cursor = srv_query(conn, "cursor");
	compare_after after;
	if (cursor && !cursor_parse(cursor, &after))
		return srv_reply_error(conn, ERR_BAD_QUERY,
				       "cursor: expected a next_cursor of this route");
	t.after = cursor ? &after : NULL;
	/* The facet rows it reads count every report committed before it. */
	char as_of[SRV_AS_OF_LEN];
	int rc = srv_read_folded(t.app_id, "compare", compare_cb, &t, as_of);
	if (rc < 0) {
		rows_free(&t);
		return srv_reply_store_error(conn, rc);
	}
	size_t len = 0;
	char *json = reply_text(&t, as_of, &len);
	rows_free(&t);
	if (!json)
		return srv_reply_error(conn, ERR_INTERNAL, NULL);
	return srv_reply_text(conn, 200, "application/json", json, len);
}
