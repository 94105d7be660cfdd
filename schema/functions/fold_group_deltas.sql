-- fold_group_deltas — an app's committed deltas (group_deltas, schema/026)
-- counted into the groups' counters, group_days, group_dim_days,
-- group_facet_days, the call tree (group_stack_days) and the search terms
-- of its new stacks (group_terms), app_dimensions and the users' activity,
-- in one transaction (docs/STORAGE.md "Deltas").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called by the server's folder every second and before every read of
-- those tables on the primary (the groups list, a group, its tree, the
-- comparison, the pick lists, the stats; a read replica's reads do not
-- fold: fold_clocks below), and by tests before they read the tables.
-- Two folds at once are safe: the second
-- waits on the rows the first deletes, finds them gone and counts the
-- rest. Locks: the deltas (by primary key), then the groups rows, the day
-- rows, the dimension rows, the facet rows and the call tree's rows, each
-- table in key order, as reprocessing takes them (ingest locks groups
-- rows and none of the others), and the app's pick lists (app_dimensions),
-- which only a fold writes; then, in a statement of its own, the users'
-- activity (count_activity), as sampling check-ins lock it; last the
-- groups' status rows (lifecycle_after_fold: ignores that ran out, spikes),
-- and the app's fold clock (fold_clocks, schema/048).
CREATE OR REPLACE FUNCTION fold_group_deltas(p_app bigint)
RETURNS bigint
LANGUAGE plpgsql
-- As ingest_reports: one plan, on the indexes.
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
  folded bigint;
  days date[];
  versions text[];
  users text[];
  listed boolean[];
  durations bigint[];
  key1s text[];
BEGIN
  WITH gone AS (
    DELETE FROM group_deltas WHERE app_id = p_app RETURNING *
  ), counted AS (
    SELECT lvl::smallint AS level, CASE lvl WHEN 1 THEN key1 ELSE key2 END AS key,
           user_id AS uid, day, app_version, os_version, device, kind, in_sample, at,
           duration_ms AS ms
      FROM gone, (VALUES (1), (2)) AS l(lvl)
  ), dimensions AS (
    -- The app's pick lists (schema/015): one row per day, dimension and
    -- value, written once a fold rather than by every batch (every batch
    -- has the same few, and each rewrite left a dead version the next
    -- had to step over: docs/journal/performance.md). Nobody else locks them.
    INSERT INTO app_dimensions AS a (app_id, day, dim, value, reports, first_seen, last_seen)
    SELECT p_app, g.day, x.dim, x.value, count(*), min(g.at), max(g.at)
      FROM gone g,
           LATERAL (VALUES ('version', g.app_version), ('os_version', g.os_version),
                           ('device', g.device), ('kind', g.kind)) AS x(dim, value)
     GROUP BY 2, 3, 4
     ORDER BY g.day, x.dim COLLATE "C", x.value COLLATE "C"
    ON CONFLICT (app_id, day, dim, value) DO UPDATE SET
      reports = a.reports + excluded.reports,
      first_seen = least(a.first_seen, excluded.first_seen),
      last_seen = greatest(a.last_seen, excluded.last_seen)
  ), trees AS (
    -- The call tree's counts (schema/024, 042): per group, day, version
    -- and representative stack, locked after the facet rows (run after
    -- them), in key order, as reprocessing locks them after the day
    -- rows. A delta without a stack was counted there by its ingest.
    -- An Android stack's durations are summed per frame beside the count
    -- (schema/051).
    INSERT INTO group_stack_days AS t (app_id, key1, key2, day, app_version, stack, frames,
                                       reports, ms)
    SELECT p_app, key1, key2, day, app_version, stack, min(stack_frames), count(*),
           ms_sum(jsonb_agg(stack_ms))
      FROM gone
     WHERE stack IS NOT NULL
     GROUP BY key1, key2, day, app_version, stack
     ORDER BY key1 COLLATE "C", key2 COLLATE "C", day, app_version COLLATE "C", stack
    ON CONFLICT (app_id, key1, key2, day, app_version, stack)
    DO UPDATE SET reports = t.reports + excluded.reports, ms = ms_add(t.ms, excluded.ms)
    RETURNING t.key1, t.key2, t.stack, t.frames, t.xmax = 0 AS made
  ), terms AS (
    -- The search terms (schema/046) of a stack first counted for its
    -- group, day and version: a group's stack once a day at most, never
    -- per report, and nothing at ingest. Locked after the call tree's
    -- rows (run after them: it reads what they return), in key order.
    INSERT INTO group_terms (app_id, level, key, term)
    SELECT DISTINCT p_app, l.level, CASE l.level WHEN 1 THEN n.key1 ELSE n.key2 END, x.term
      FROM (SELECT DISTINCT key1, key2, stack, frames FROM trees WHERE made) AS n,
           LATERAL stack_terms(coalesce(n.frames, (SELECT s.body FROM stacks s
                                                     WHERE s.app_id = p_app
                                                       AND s.hash = n.stack))) AS x(term),
           (VALUES (1::smallint), (2::smallint)) AS l(level)
     ORDER BY 2, 3, 4
    ON CONFLICT DO NOTHING
  ), facet_days AS (
    -- Both levels' rows per day and value of each filter dimension: all
    -- users and the in-sample ones with their count (schema/025); locked
    -- after the dimension rows (run after them), in key order.
    INSERT INTO group_facet_days AS f (app_id, level, key, day, dim, value, reports, users,
                                       sample_users, affected, first_seen, last_seen,
                                       stall_ms, max_duration_ms, duration_hist,
                                       duration_fine)
    SELECT p_app, c.level, c.key, c.day, x.dim, x.value, count(*),
           hll_add_agg(hll_hash_text(c.uid), 12, 5, 1024, 0),
           CASE WHEN NOT bool_and(c.in_sample)
                THEN coalesce(hll_add_agg(hll_hash_text(c.uid), 12, 5, 1024, 0)
                                FILTER (WHERE c.in_sample), hll_empty(12, 5, 1024, 0)) END,
           coalesce(hll_cardinality(hll_add_agg(hll_hash_text(c.uid), 12, 5, 1024, 0)
                                      FILTER (WHERE c.in_sample)), 0),
           min(c.at), max(c.at), coalesce(sum(c.ms), 0), max(c.ms),
           -- At most one duration: no histogram, its max's bucket (034, 044).
           CASE WHEN count(c.ms) > 1 THEN count_durations(array_agg(c.ms), 1) END,
           CASE WHEN count(c.ms) > 1 THEN fine_hist_of(array_agg(c.ms), 1) END
      FROM counted c,
           LATERAL (VALUES ('version', c.app_version), ('os_version', c.os_version),
                           ('device', c.device), ('kind', c.kind)) AS x(dim, value)
     GROUP BY c.level, c.key, c.day, x.dim, x.value
     ORDER BY c.level, c.key COLLATE "C", c.day, x.dim COLLATE "C", x.value COLLATE "C"
    ON CONFLICT (app_id, level, key, day, dim, value) DO UPDATE SET
      reports = f.reports + excluded.reports,
      users = hll_union_kept(f.users, excluded.users),
      -- NULL sample_users are the row's users: every user it counts is in
      -- the sample (schema/029), so only one sketch is kept and written.
      -- A sketch made from users is a new value, never the users' stored
      -- copy: two columns must not share one out-of-line value.
      affected = hll_cardinality(hll_union(coalesce(f.sample_users, f.users),
                                           coalesce(excluded.sample_users, excluded.users))),
      sample_users = CASE
        WHEN f.sample_users IS NULL AND excluded.sample_users IS NULL THEN NULL
        WHEN f.sample_users IS NULL THEN hll_union(f.users, excluded.sample_users)
        ELSE hll_union_kept(f.sample_users, coalesce(excluded.sample_users, excluded.users)) END,
      first_seen = least(f.first_seen, excluded.first_seen),
      last_seen = greatest(f.last_seen, excluded.last_seen),
      stall_ms = f.stall_ms + excluded.stall_ms,
      max_duration_ms = greatest(f.max_duration_ms, excluded.max_duration_ms),
      duration_hist = kept_duration_hists_sum(f.duration_hist, f.max_duration_ms,
                                              excluded.duration_hist,
                                              excluded.max_duration_ms),
      duration_fine = CASE WHEN excluded.max_duration_ms IS NULL THEN f.duration_fine
                           ELSE fine_hist_add(kept_fine_hist(f.duration_fine, f.max_duration_ms),
                                              kept_fine_hist(excluded.duration_fine,
                                                             excluded.max_duration_ms)) END
  ), daily AS (
    -- Both levels' rows per day and filter dimensions: the deltas' users
    -- of a row made into one sketch, then one upsert per row. The
    -- data-changing parts of a WITH run last to first, so these rows are
    -- locked after group_days', in key order (schema/016).
    -- A delta's combination (schema/039) was committed with it by ingest:
    -- one missing would fail the fold (combo NOT NULL), its deltas kept.
    INSERT INTO group_dim_days AS d (app_id, level, key, day, combo, in_sample, reports,
                                     users, first_seen, last_seen, stall_ms, max_duration_ms,
                                     duration_hist, duration_fine)
    SELECT p_app, c.level, c.key, c.day, dc.id, c.in_sample, count(*),
           hll_add_agg(hll_hash_text(c.uid), 12, 5, 1024, 0), min(c.at), max(c.at),
           coalesce(sum(c.ms), 0), max(c.ms),
           CASE WHEN count(c.ms) > 1 THEN count_durations(array_agg(c.ms), 1) END,
           CASE WHEN count(c.ms) > 1 THEN fine_hist_of(array_agg(c.ms), 1) END
      FROM counted c
      LEFT JOIN dim_combos dc
        ON dc.app_id = p_app AND dc.app_version = c.app_version
       AND dc.os_version = c.os_version AND dc.device = c.device AND dc.kind = c.kind
     GROUP BY c.level, c.key, dc.id, c.day, c.in_sample
     ORDER BY c.level, c.key COLLATE "C", dc.id, c.day, c.in_sample
    ON CONFLICT (app_id, level, key, combo, day, in_sample)
    DO UPDATE SET reports = d.reports + excluded.reports,
                  users = hll_union_kept(d.users, excluded.users),
                  first_seen = least(d.first_seen, excluded.first_seen),
                  last_seen = greatest(d.last_seen, excluded.last_seen),
                  stall_ms = d.stall_ms + excluded.stall_ms,
                  max_duration_ms = greatest(d.max_duration_ms, excluded.max_duration_ms),
                  duration_hist = kept_duration_hists_sum(d.duration_hist,
                                                          d.max_duration_ms,
                                                          excluded.duration_hist,
                                                          excluded.max_duration_ms),
                  duration_fine = CASE WHEN excluded.max_duration_ms IS NULL
                                       THEN d.duration_fine
                                       ELSE fine_hist_add(
                                         kept_fine_hist(d.duration_fine, d.max_duration_ms),
                                         kept_fine_hist(excluded.duration_fine,
                                                        excluded.max_duration_ms)) END
  ), fresh AS (
    -- Both levels' rows per day (unfiltered ranges, per-day series),
    -- locked first after the deltas (the DELETE runs as the main query
    -- reads it, before the parts below), in key order.
    INSERT INTO group_days AS d (app_id, level, key, day, reports, users, first_seen,
                                 last_seen, stall_ms, max_duration_ms, duration_hist,
                                 duration_fine)
    SELECT p_app, level, key, day, count(*), hll_add_agg(hll_hash_text(uid), 12, 5, 1024, 0),
           min(at), max(at), coalesce(sum(ms), 0), max(ms), count_durations(array_agg(ms), 1),
           fine_hist_of(array_agg(ms), 1)
      FROM counted
     GROUP BY level, key, day
     ORDER BY level, key COLLATE "C", day
    ON CONFLICT (app_id, level, key, day) DO UPDATE SET
      reports = d.reports + excluded.reports,
      users = hll_union_kept(d.users, excluded.users),
      first_seen = least(d.first_seen, excluded.first_seen),
      last_seen = greatest(d.last_seen, excluded.last_seen),
      stall_ms = d.stall_ms + excluded.stall_ms,
      max_duration_ms = greatest(d.max_duration_ms, excluded.max_duration_ms),
      duration_hist = add_hists(d.duration_hist, excluded.duration_hist),
      duration_fine = CASE WHEN excluded.max_duration_ms IS NULL THEN d.duration_fine
                           ELSE fine_hist_add(d.duration_fine, excluded.duration_fine) END
  ), grouped AS (
    -- Both levels' groups rows (made by ingest_reports with the deltas,
    -- so always there: the frames given are never stored), locked first
    -- after the deltas, as ingest and reprocessing lock them, in key
    -- order: the last part runs first.
    INSERT INTO groups AS g (app_id, level, key, frames, reports, users, users_hll,
                             first_seen, last_seen, stall_ms, max_duration_ms, duration_hist,
                             duration_fine)
    SELECT p_app, level, key, '[]', count(*),
           hll_cardinality(hll_add_agg(hll_hash_text(uid), 12, 5, 1024, 0)),
           hll_add_agg(hll_hash_text(uid), 12, 5, 1024, 0), min(at), max(at),
           coalesce(sum(ms), 0), max(ms), count_durations(array_agg(ms), 1),
           fine_hist_of(array_agg(ms), 1)
      FROM counted
     GROUP BY level, key
     ORDER BY level, key COLLATE "C"
    ON CONFLICT (app_id, level, key) DO UPDATE SET
      reports = g.reports + excluded.reports,
      users = hll_cardinality(hll_union(g.users_hll, excluded.users_hll)),
      users_hll = hll_union_kept(g.users_hll, excluded.users_hll),
      first_seen = least(g.first_seen, excluded.first_seen),
      last_seen = greatest(g.last_seen, excluded.last_seen),
      stall_ms = g.stall_ms + excluded.stall_ms,
      max_duration_ms = greatest(g.max_duration_ms, excluded.max_duration_ms),
      duration_hist = add_hists(g.duration_hist, excluded.duration_hist),
      duration_fine = CASE WHEN excluded.max_duration_ms IS NULL THEN g.duration_fine
                           ELSE fine_hist_add(g.duration_fine, excluded.duration_fine) END
  )
  SELECT count(*), array_agg(day), array_agg(app_version), array_agg(user_id),
         array_agg(NOT in_sample), array_agg(duration_ms), array_agg(key1)
    INTO folded, days, versions, users, listed, durations, key1s
    FROM gone;
  -- A stored report counts its user as active (SPEC §10.2), and as
  -- stalled when in the sample (a report is stored only when its user is
  -- sampled or whitelisted, so in_sample is "sampled and not listed"):
  -- the activity rows locked last, in count_activity's order, as
  -- sampling check-ins take them. Here rather than in every batch: a day's
  -- version row was rewritten by each (see app_dimensions above).
  IF folded > 0 THEN
    PERFORM count_activity(p_app, days, versions, users, array_fill(true, ARRAY[folded::int]),
                           listed, array_fill(true, ARRAY[folded::int]), durations,
                           -- Rates divide by the OS versions and devices
                           -- check-ins said (SPEC §10.2), not reports': a
                           -- user known from reports only is in no such
                           -- denominator, as a report is in every numerator.
                           array_fill(''::text, ARRAY[folded::int]),
                           array_fill(''::text, ARRAY[folded::int]));
    -- What the new counts decide for the groups' status: status rows last.
    PERFORM lifecycle_after_fold(p_app, key1s, days);
    -- Reads that do not fold (a replica's) say how current they are by
    -- this (schema/048): every delta committed before this transaction
    -- began was visible to it, so it is counted now. Only a fold writes
    -- the row; an idle app's writes nothing.
    INSERT INTO fold_clocks AS k (app_id, folded_through) VALUES (p_app, now())
    ON CONFLICT (app_id) DO UPDATE
      SET folded_through = greatest(k.folded_through, excluded.folded_through);
  END IF;
  RETURN folded;
END $$;
COMMENT ON FUNCTION fold_group_deltas(bigint) IS
  'Counts the committed deltas of app P_APP (group_deltas) into the groups'' counters, group_days, group_dim_days, group_facet_days, the call tree (group_stack_days), app_dimensions and the users'' activity (count_activity) and deletes them, in one statement, locking the rows in the order reprocessing does; returns how many reports it counted.';
