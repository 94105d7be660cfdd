-- 040_dimension_lists_from_deltas.sql — the app's pick lists
-- (app_dimensions) are counted from ingest's deltas by fold_group_deltas,
-- like the group rows (docs/STORAGE.md "Deltas").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, ingest rate; docs/PERFORMANCE.md "Pick lists from the
-- deltas"): every batch upserted the same few rows of the day (its kind,
-- versions, OS versions, devices): 18 rows rewritten 350 times a second.
-- Each rewrite leaves a dead version the next must step over until a
-- prune may remove it, and a fold's transaction (most of a second) holds
-- that back: the upsert of those rows was 60% of the batch's biggest
-- statement, on the one connection every report waits for.
--
-- The deltas waiting now were counted in the pick lists by the ingest
-- that wrote them, and the fold from now on counts them there again: they
-- are taken out here, so the fold puts them back once. First and last seen
-- stay: the fold's minimum and maximum over the same reports change
-- nothing.

UPDATE app_dimensions a SET reports = a.reports - w.reports
  FROM (SELECT d.app_id, d.day, x.dim, x.value, count(*) AS reports
          FROM group_deltas d,
               LATERAL (VALUES ('version', d.app_version), ('os_version', d.os_version),
                               ('device', d.device), ('kind', d.kind)) AS x(dim, value)
         GROUP BY 1, 2, 3, 4) w
 WHERE a.app_id = w.app_id AND a.day = w.day AND a.dim = w.dim AND a.value = w.value;
