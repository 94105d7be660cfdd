-- 031_narrow_duration_hists.sql — the duration histograms of the
-- dimension and facet rows hold 4-byte counts.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report): group_dim_days and group_facet_days
-- have about 1.35 rows per report at 1,000,000 reports (most combinations
-- of a group's day and dimensions see a report or two), and an 8-bucket
-- bigint[] is 88 bytes of each row; as integer[] it is 56. One bucket of
-- one group, day and combination never nears 2^31 reports. The counters'
-- arithmetic stays bigint (add_hists, the fold's sums): PostgreSQL casts
-- the result to integer[] where it is stored. groups and group_days keep
-- bigint[]: one row per group or group-day, all-time sums.

ALTER TABLE group_dim_days ALTER COLUMN duration_hist DROP DEFAULT,
  ALTER COLUMN duration_hist TYPE integer[],
  ALTER COLUMN duration_hist SET DEFAULT '{0,0,0,0,0,0,0,0}';
ALTER TABLE group_facet_days ALTER COLUMN duration_hist DROP DEFAULT,
  ALTER COLUMN duration_hist TYPE integer[],
  ALTER COLUMN duration_hist SET DEFAULT '{0,0,0,0,0,0,0,0}';
