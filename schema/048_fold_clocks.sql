-- 048_fold_clocks.sql — how current an app's folded counts are, for reads
-- that do not fold (issue 43, SPEC §12: a read replica's replies carry
-- "as_of"; docs/STORAGE.md "Fold clock").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: a read on the primary folds its app's deltas first, so it counts
-- every report committed before it. A read on a streaming replica cannot
-- write: it counts what the primary's folds counted, and says up to when.
-- With none of the app's deltas waiting in its snapshot that is the
-- snapshot's own time; with some waiting it is the start of the last fold
-- that counted some of them, kept here. fold_group_deltas writes the row
-- only when it counted something, so an idle app's fold each second still
-- writes nothing.
CREATE TABLE fold_clocks (
  app_id bigint PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
  folded_through timestamptz NOT NULL
);
COMMENT ON TABLE fold_clocks IS
  'Per app: the start of the last fold (fold_group_deltas) that counted some of its deltas; every delta committed before it is counted. Read with group_deltas by reads that do not fold (store/fold_clock.c) to say how current their counts are. Written only by the fold, last, after the status rows.';
COMMENT ON INDEX fold_clocks_pkey IS
  'One clock per app: the fold upserts it, a read looks it up by app.';
