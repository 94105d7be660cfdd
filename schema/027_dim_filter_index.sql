-- 027_dim_filter_index.sql — the group list under two or more dimension
-- filters finds its group_dim_days rows through an index.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: such a list (version= and device= chosen together on the
-- dashboard) read every group_dim_days row of its days, a parallel
-- sequential scan of the whole table at one day of 1,000,000 reports
-- (33,000 pages, 150-320 ms). With the dimensions in the day index, the
-- scan checks them in the index and fetches only the rows that match
-- (docs/PERFORMANCE.md, "Issue 25 through the ingest path"). The columns
-- never change once a row is written, so its updates stay HOT; btree
-- deduplication keeps the index small (many rows share a day and a
-- combination).

DROP INDEX group_dim_days_day_idx;
CREATE INDEX group_dim_days_filter_idx
  ON group_dim_days (app_id, level, day, app_version, os_version, device, kind);
COMMENT ON INDEX group_dim_days_filter_idx IS
  'The group list over a date range under two or more dimension filters: the filters are checked in the index, rows read only when they match.';
