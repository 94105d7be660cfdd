-- 028_group_counters_from_deltas.sql — a group's counters (reports,
-- users, first and last seen, severity) are counted from ingest's deltas
-- by fold_group_deltas, like its day rows (docs/STORAGE.md "Deltas").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: ingest rewrote both of a report's groups rows, their users' sketch
-- with them, in every batch. A popular group's sketch is kept out of line
-- (over 2 KB), so each batch also left a dead TOAST copy of it: 639 MB at
-- 1,000,000 reports, on the writer's most contended rows
-- (docs/PERFORMANCE.md, "Issue 25 through the ingest path").
-- Ingest now makes a group and keeps its culprit; the fold counts it.
--
-- The deltas waiting now were counted in their groups by the ingest that
-- wrote them, and the fold from now on counts them there again: they are
-- taken out of the counters here, so the fold puts them back once. A
-- sketch cannot take a user out, and needs not: the fold adds the same
-- users again, which changes nothing; nor do first and last seen or the
-- longest duration. The histogram's buckets are count_durations'.
WITH waiting AS (
  SELECT d.app_id, l.level::smallint AS level,
         CASE l.level WHEN 1 THEN d.key1 ELSE d.key2 END AS key,
         width_bucket(d.duration_ms, '{0,250,500,1000,2000,5000,10000,30000}'::bigint[])
           AS bucket, d.duration_ms AS ms
    FROM group_deltas d, (VALUES (1), (2)) AS l(level)
), per_group AS (
  SELECT app_id, level, key, count(*) AS reports, coalesce(sum(ms), 0) AS stall_ms,
         ARRAY[count(*) FILTER (WHERE bucket = 1), count(*) FILTER (WHERE bucket = 2),
               count(*) FILTER (WHERE bucket = 3), count(*) FILTER (WHERE bucket = 4),
               count(*) FILTER (WHERE bucket = 5), count(*) FILTER (WHERE bucket = 6),
               count(*) FILTER (WHERE bucket = 7), count(*) FILTER (WHERE bucket = 8)] AS hist
    FROM waiting
   GROUP BY app_id, level, key
)
UPDATE groups g SET reports = g.reports - p.reports, stall_ms = g.stall_ms - p.stall_ms,
       duration_hist = ARRAY(SELECT g.duration_hist[b] - p.hist[b]
                               FROM generate_series(1, 8) AS b ORDER BY b)::bigint[]
  FROM per_group p
 WHERE g.app_id = p.app_id AND g.level = p.level AND g.key = p.key;

COMMENT ON TABLE group_deltas IS
  'A stored report not yet counted in its groups'' counters, group_days, group_dim_days and group_facet_days: inserted by ingest_reports in the report''s transaction, deleted by fold_group_deltas as it counts it; reprocessing moves a report''s delta instead of the counters while it waits. Vacuumed every 20,000 deletes: the table only ever holds the last seconds of reports.';
COMMENT ON TABLE groups IS
  'Stall groups (SPEC §6): level 1 keyed by the innermost two frame identities, level 2 by the innermost four inside its level-1 group (parent_key). Made by ingest_reports with their first report; their counters are counted from ingest''s deltas by fold_group_deltas (schema/028), all-time, and outlive the reports: retention never touches them.';
COMMENT ON INDEX groups_pkey IS 'Makes a group at ingest and counts its deltas into it; reads one group.';

-- A sketch a fold changes is still written anew, its old copy dead until
-- a vacuum: the sketches' TOAST is vacuumed every few thousand dead chunks
-- rather than at a fifth of the table, which at this churn was always
-- far behind (docs/PERFORMANCE.md, "Issue 25 through the ingest path").
ALTER TABLE groups SET (toast.autovacuum_vacuum_scale_factor = 0,
                        toast.autovacuum_vacuum_threshold = 5000);
ALTER TABLE group_days SET (toast.autovacuum_vacuum_scale_factor = 0,
                            toast.autovacuum_vacuum_threshold = 5000);
ALTER TABLE group_dim_days SET (toast.autovacuum_vacuum_scale_factor = 0,
                                toast.autovacuum_vacuum_threshold = 5000);
ALTER TABLE group_facet_days SET (toast.autovacuum_vacuum_scale_factor = 0,
                                  toast.autovacuum_vacuum_threshold = 5000);
