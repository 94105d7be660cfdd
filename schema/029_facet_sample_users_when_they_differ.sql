-- 029_facet_sample_users_when_they_differ.sql — a group_facet_days row
-- keeps its in-sample users' sketch only when it differs from its users'.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: nearly every user is in the sample (whitelisted users are the
-- exception), so the two sketches of a row were the same and every fold
-- wrote both: the facet rows' out-of-line sketches and their dead copies
-- were the largest part of a 1,000,000-report database (docs/PERFORMANCE.md,
-- "Issue 25 through the ingest path"). NULL now means "the row's users": the
-- fold (fold_group_deltas) leaves it NULL while every report it counts is
-- in the sample and makes it a sketch of its own at the first that is not;
-- readers take coalesce(sample_users, users). Rows written before keep
-- their sketch.

ALTER TABLE group_facet_days ALTER COLUMN sample_users DROP NOT NULL;
COMMENT ON COLUMN group_facet_days.sample_users IS
  'The in-sample users (reports.in_sample) of the row as hll; NULL when they are the row''s users (every report counted was in the sample).';
