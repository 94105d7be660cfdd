-- 034_single_duration_rows_keep_no_hist.sql — a dimension or facet row
-- that counts at most one duration keeps no histogram.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report): at 1,000,000 reports three quarters
-- of the group_dim_days rows count one report (a rare group's day sees a
-- report or two per combination of version, OS version, device and kind),
-- and their histogram — 53 bytes of each row, more than a quarter of it —
-- is the bucket of max_duration_ms, which the row holds anyway. Such a
-- row now keeps duration_hist NULL (schema/functions/kept_duration_hist.sql
-- gives it back): the fold writes NULL for a new row of at most one
-- duration; every writer that adds to a row or takes a report out of it
-- starts from kept_duration_hist, so a row keeps a histogram from its
-- second duration on; readers sum kept_duration_hist's buckets.
-- What holds a NULL row right: its histogram is the bucket of its
-- max_duration_ms. Only the fold's insert makes one, from its exact
-- max; a move out of the row writes the histogram first (the max may
-- then become an upper bound); recount_group_day sets the exact max,
-- whose bucket a NULL row's max already had.
-- Rows stored before keep their histograms: rewriting them would cost an
-- update of most rows at the upgrade for bytes new rows save anyway.

ALTER TABLE group_dim_days ALTER COLUMN duration_hist DROP NOT NULL,
  ALTER COLUMN duration_hist DROP DEFAULT;
ALTER TABLE group_facet_days ALTER COLUMN duration_hist DROP NOT NULL,
  ALTER COLUMN duration_hist DROP DEFAULT;
COMMENT ON COLUMN group_dim_days.duration_hist IS
  'Counts per duration bucket (count_durations), or NULL when the row counts at most one duration: then the bucket of max_duration_ms (kept_duration_hist).';
COMMENT ON COLUMN group_facet_days.duration_hist IS
  'Counts per duration bucket (count_durations), or NULL when the row counts at most one duration: then the bucket of max_duration_ms (kept_duration_hist).';
