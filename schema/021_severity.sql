-- 021_severity.sql — per group and day, how long its stalls blocked the
-- main thread: the summed durations, the longest one and a histogram of
-- them (SPEC §10.1), backfilled from the stored reports.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why on the aggregate rows: group replies and sort=stall_ms answer from
-- aggregates kept at ingest (SPEC §8), never from report rows. The three
-- values go where reports already are counted: group_days (date ranges,
-- per-day series), group_dim_days (filters) and groups (all time, so
-- sort=stall_ms without a range stays a read of the app's groups rows).
-- ingest_reports adds to them in the report's transaction; move_report
-- moves a report's duration exactly, and recomputes a row's max from its
-- kept reports when the moved report may have held it (move_day_row;
-- recount_group_day for a group-day too big to recount at each move);
-- the groups' values are recomputed from their group_days rows, as their
-- users are (count_out_of_group). Retention keeps the rows, and so the
-- values, like the reports counts.
--
-- The histogram is one bigint[8] per row: counts of durations from the
-- lower bucket edges 0, 250, 500, 1000, 2000, 5000, 10000, 30000 ms
-- (count_durations, which width_bucket makes: exactly 250 is the second
-- bucket, anything from 30000 on the last). An array, not eight columns:
-- SPEC's reply is that array, and it is added as one value
-- (add_hists). A report without a duration adds to none of the three.
-- max_duration_ms is NULL while a row has no report with a duration.
--
-- Backfill: every row whose reports are still stored (a group-day's
-- reports are all kept or, once retention dropped its day partition, all
-- gone) is computed from them. The rows of dropped days keep their
-- reports count with stall_ms 0, an empty histogram and no max: their
-- durations are gone (docs/STORAGE.md "Severity"). This migration inlines
-- the bucket edges instead of calling count_durations: on a fresh
-- database the function files run after the numbered migrations.

ALTER TABLE group_days
  ADD COLUMN stall_ms bigint NOT NULL DEFAULT 0 CHECK (stall_ms >= 0),
  ADD COLUMN max_duration_ms bigint,
  ADD COLUMN duration_hist bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0}'
    CHECK (cardinality(duration_hist) = 8);
ALTER TABLE group_dim_days
  ADD COLUMN stall_ms bigint NOT NULL DEFAULT 0 CHECK (stall_ms >= 0),
  ADD COLUMN max_duration_ms bigint,
  ADD COLUMN duration_hist bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0}'
    CHECK (cardinality(duration_hist) = 8);
ALTER TABLE groups
  ADD COLUMN stall_ms bigint NOT NULL DEFAULT 0 CHECK (stall_ms >= 0),
  ADD COLUMN max_duration_ms bigint,
  ADD COLUMN duration_hist bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0}'
    CHECK (cardinality(duration_hist) = 8);

COMMENT ON COLUMN group_days.stall_ms IS
  'Sum of the durations of the row''s reports that have one (SPEC §10.1): the main-thread time the group blocked that day.';
COMMENT ON COLUMN group_days.max_duration_ms IS
  'The longest duration among the row''s reports; NULL when none has a duration.';
COMMENT ON COLUMN group_days.duration_hist IS
  'Counts of the row''s durations from the lower bucket edges 0, 250, 500, 1000, 2000, 5000, 10000, 30000 ms (count_durations).';
COMMENT ON COLUMN group_dim_days.stall_ms IS 'As group_days.stall_ms, per filter dimensions.';
COMMENT ON COLUMN group_dim_days.max_duration_ms IS
  'As group_days.max_duration_ms, per filter dimensions.';
COMMENT ON COLUMN group_dim_days.duration_hist IS
  'As group_days.duration_hist, per filter dimensions.';
COMMENT ON COLUMN groups.stall_ms IS
  'All-time sum of the group''s durations (the sum of its group_days rows): sort=stall_ms without a range reads it.';
COMMENT ON COLUMN groups.max_duration_ms IS 'All-time longest duration of the group; NULL when none.';
COMMENT ON COLUMN groups.duration_hist IS 'All-time duration histogram of the group (group_days.duration_hist).';

-- One statement: the stored reports' durations per dimension row, and
-- from them the day rows and the groups (whose rows of dropped days add
-- nothing).
WITH x AS (
  SELECT r.app_id, l.level, CASE l.level WHEN 1 THEN r.key1 ELSE r.key2 END AS key,
         r.received_day AS day, coalesce(r.app_version, '') AS app_version,
         coalesce(r.os_version, '') AS os_version, coalesce(r.device, '') AS device, r.kind,
         sum(r.duration_ms) AS stall_ms, max(r.duration_ms) AS max_duration_ms,
         ARRAY[count(*) FILTER (WHERE b.b = 1), count(*) FILTER (WHERE b.b = 2),
               count(*) FILTER (WHERE b.b = 3), count(*) FILTER (WHERE b.b = 4),
               count(*) FILTER (WHERE b.b = 5), count(*) FILTER (WHERE b.b = 6),
               count(*) FILTER (WHERE b.b = 7), count(*) FILTER (WHERE b.b = 8)] AS hist
    FROM reports r, (VALUES (1::smallint), (2::smallint)) AS l(level),
         LATERAL (SELECT width_bucket(r.duration_ms, ARRAY[0, 250, 500, 1000, 2000, 5000,
                                                           10000, 30000]::bigint[]) AS b) AS b
   WHERE r.duration_ms >= 0
   GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
), dims AS (
  UPDATE group_dim_days d
     SET stall_ms = x.stall_ms, max_duration_ms = x.max_duration_ms, duration_hist = x.hist
    FROM x
   WHERE d.app_id = x.app_id AND d.level = x.level AND d.key = x.key AND d.day = x.day
     AND d.app_version = x.app_version AND d.os_version = x.os_version
     AND d.device = x.device AND d.kind = x.kind
), days AS (
  UPDATE group_days d
     SET stall_ms = y.stall_ms, max_duration_ms = y.max_duration_ms, duration_hist = y.hist
    FROM (SELECT app_id, level, key, day, sum(stall_ms) AS stall_ms,
                 max(max_duration_ms) AS max_duration_ms,
                 ARRAY[sum(hist[1]), sum(hist[2]), sum(hist[3]), sum(hist[4]), sum(hist[5]),
                       sum(hist[6]), sum(hist[7]), sum(hist[8])]::bigint[] AS hist
            FROM x GROUP BY 1, 2, 3, 4) AS y
   WHERE d.app_id = y.app_id AND d.level = y.level AND d.key = y.key AND d.day = y.day
)
UPDATE groups g
   SET stall_ms = y.stall_ms, max_duration_ms = y.max_duration_ms, duration_hist = y.hist
  FROM (SELECT app_id, level, key, sum(stall_ms) AS stall_ms,
               max(max_duration_ms) AS max_duration_ms,
               ARRAY[sum(hist[1]), sum(hist[2]), sum(hist[3]), sum(hist[4]), sum(hist[5]),
                     sum(hist[6]), sum(hist[7]), sum(hist[8])]::bigint[] AS hist
          FROM x GROUP BY 1, 2, 3) AS y
 WHERE g.app_id = y.app_id AND g.level = y.level AND g.key = y.key;

-- Reprocessing moves a report's duration too: the new signatures take it
-- (schema/functions/). IF EXISTS: on a fresh database the numbered
-- migrations run before any function file made these.
DROP FUNCTION IF EXISTS move_report(bigint, text, text, text, text, jsonb, jsonb, date,
                                    timestamptz, text, text, text, text, text);
DROP FUNCTION IF EXISTS move_day_row(bigint, smallint, text, text, text, date, timestamptz,
                                     text, boolean, text, text, text, text);
DROP FUNCTION IF EXISTS count_into_group(bigint, smallint, text, text, jsonb, timestamptz,
                                         text);
