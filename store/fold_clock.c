/*
 * fold_clock.c — how current an app's folded counts are (schema/048,
 * docs/STORAGE.md "Fold clock"); see groups.h.
 */
#include "store/groups.h"
#include "store/internal.h"

typedef struct text_out {
	char *buf;
	size_t cap;
} text_out;

/* Column 0 into the text_out CLS points to ("" for NULL or too long). */
static int read_text(void *cls, const st_row *row)
{
	const text_out *t = cls;
	st_row_copy(row, 0, t->buf, t->cap);
	return 0;
}

int st_folded_as_of(st_conn *c, int64_t app_id, char *out, size_t cap)
{
	/*
	 * The moment first, the snapshot after: in a statement of its own,
	 * so every commit up to it is visible to the next one (read
	 * committed). A replica's moment is its last replayed commit's, the
	 * primary's its transaction's start.
	 */
	static const st_stmt moment = {
		"folded_moment",
		"SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_xact_replay_timestamp()"
		" ELSE now() END::text",
		0};
	/* No delta of the app waiting: all it had then is folded. Otherwise
	 * the last fold that counted some of them: it counted every delta
	 * committed before it began. */
	static const st_stmt as_of = {
		"folded_as_of",
		"SELECT " ST_TS("CASE WHEN EXISTS (SELECT 1 FROM group_deltas WHERE app_id = $1)"
				" THEN (SELECT folded_through FROM fold_clocks WHERE app_id = $1)"
				" ELSE coalesce($2::timestamptz, (SELECT folded_through FROM"
				" fold_clocks WHERE app_id = $1)) END"),
		2};
	char at[64] = "";
	text_out moment_out = {at, sizeof at}, as_of_out = {out, cap};
	int rc = st_exec(c, &moment, NULL, 0, read_text, &moment_out);
	if (rc < 0)
		return rc;
	out[0] = '\0';
	/* A replica that has replayed nothing since it started knows no
	 * moment (NULL): only the fold clock then. */
	rc = ST_EXEC(c, &as_of, read_text, &as_of_out, ST_INT64(app_id),
		     ST_TEXT(at[0] ? at : NULL));
	return rc < 0 ? rc : out[0] != '\0';
}
