-- 040_pick_lists_and_activity_from_deltas.sql — the app's pick lists
-- (app_dimensions) and the stored reports' activity (activity_users,
-- activity_daily) are counted from ingest's deltas by fold_group_deltas,
-- like the group rows (docs/STORAGE.md "Deltas").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, ingest rate; docs/PERFORMANCE.md "Pick lists and
-- activity from the deltas"): every batch upserted the same few rows of
-- the day — its kinds, versions, OS versions and devices in app_dimensions,
-- its versions in activity_daily — 23 rows rewritten 350 times a second.
-- Each rewrite leaves a dead version the next must step over until a
-- prune may remove it, and a fold's transaction (most of a second) holds
-- that back: the pick lists' upsert alone was 60% of the batch's biggest
-- statement, on the one connection every report waits for.
--
-- The deltas waiting now were counted in both by the ingest that wrote
-- them, and the fold from now on counts them again: their reports (and
-- durations) are taken out here, so the fold puts them back once. First
-- and last seen stay: the fold's minimum and maximum over the same reports
-- change nothing. The users stay too: their activity_users rows are there,
-- already reported, so the fold finds nothing new to count.

UPDATE app_dimensions a SET reports = a.reports - w.reports
  FROM (SELECT d.app_id, d.day, x.dim, x.value, count(*) AS reports
          FROM group_deltas d,
               LATERAL (VALUES ('version', d.app_version), ('os_version', d.os_version),
                               ('device', d.device), ('kind', d.kind)) AS x(dim, value)
         GROUP BY 1, 2, 3, 4) w
 WHERE a.app_id = w.app_id AND a.day = w.day AND a.dim = w.dim AND a.value = w.value;

UPDATE activity_daily a SET reports = a.reports - w.reports, stall_ms = a.stall_ms - w.stall_ms
  FROM (SELECT app_id, day, app_version, count(*) AS reports,
               coalesce(sum(duration_ms), 0) AS stall_ms
          FROM group_deltas GROUP BY 1, 2, 3) w
 WHERE a.app_id = w.app_id AND a.day = w.day AND a.app_version = w.app_version;
