-- 011_day_ranges_by_brin.sql — day ranges of group_daily and report_keys
-- found through BRIN indexes instead of B-trees.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Both B-trees began with the columns ingest_reports probes by (app, level;
-- app), so while the tables were small the planner could pick them for
-- those probes instead of the primary keys — and on a new install it did:
-- a plan cached while the tables were nearly empty went on reading every
-- row of the app and level per probe as the tables grew, until an
-- autoanalyze replaced it (seen in bench/ingest: a first round of 476
-- reports/s, then about 2,000; and 6 ms per probe in a plan of the day). A BRIN index cannot serve an equality probe, so
-- the primary keys are the only choice. Rows arrive day after day, so a
-- BRIN on the day narrows a day range to the pages holding it, which is
-- what the date-filtered group lists and retention ask; and it costs an
-- insert next to nothing, where each B-tree took an index entry per row
-- (three per report).

DROP INDEX group_daily_day_idx;
CREATE INDEX group_daily_day_brin ON group_daily USING brin (day)
  WITH (autosummarize = on);
COMMENT ON INDEX group_daily_day_brin IS
  'Group lists over a date range without scanning all history (rows arrive in day order).';

DROP INDEX report_keys_day_idx;
CREATE INDEX report_keys_day_brin ON report_keys USING brin (received_day)
  WITH (autosummarize = on);
COMMENT ON INDEX report_keys_day_brin IS
  'Retention finds the keys of the days it drops (rows arrive in day order).';
