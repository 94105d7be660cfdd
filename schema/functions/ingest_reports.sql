-- ingest_reports — a batch of reports of one app stored in a few statements
-- (docs/STORAGE.md "Ingest of one report").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The rules, decided per batch:
--  * a report whose report_id is stored already is a duplicate (its id);
--  * whitelisted users (unexpired) are stored without sampling or quota;
--  * others: not sampled today -> not_sampled; else the n-th candidate of
--    a user and day in this batch is stored when the reports already
--    counted that day plus n stay within the quota, else quota;
--  * a resend under another user id stored by a concurrent transaction
--    meanwhile loses its key insert: a duplicate, counted nowhere (the
--    server never puts one report_id twice into a batch:
--    server/service/ingest_commit.c);
--  * a group is made with its first report, its culprit kept better
--    (schema/022); a level-1 group made, unless temporary, is a new_group
--    event, and a resolved group regresses (SPEC §11, schema/043); its counters and its day, dimension and facet rows,
--    its call tree (group_stack_days), the app's pick lists
--    (app_dimensions) and its user's activity (count_activity) are
--    counted from each stored report's delta
--    (group_deltas, schema/026) by fold_group_deltas, outside this
--    transaction.
-- Locks, in the order every batch and move_report keep: report partitions
-- (before any row lock), the batch's users' advisory locks by hash, the
-- missing images' shared advisory locks, then
-- the contended group rows, level 1 by key and level 2 by key, last, so
-- they stay locked only until the commit, then dsyms/missing's counters
-- (image_waits) by key; then the groups' status rows, only when one
-- regresses (regress_groups), in key order; then, in a statement of its
-- own, the stacks by hash (keep_stacks). The call tree's counts (group_stack_days) and the
-- users' activity (count_activity) are the fold's.
--
-- Element i of every array belongs to report i: its identity, arrival
-- (UTC day and time), whether its user is sampled today, its metadata
-- (NULL when unknown), both group keys and both levels' identities (JSON
-- arrays), whether it waits for symbols and the images it waits for (a
-- JSON array, as add_report_waits takes), and its two documents: each
-- the JSON text with one 0x01 byte per stack and the stacks' hashes (a
-- uuid[] literal; schema/018). P_STACK_HASHES and P_STACK_BODIES are the
-- batch's distinct stacks, stored when a stored report refers to them.
-- P_CULPRITS[i] is report i's culprit (JSON, NULL when none), offered to
-- both of its groups (better_culprit, schema/022).

CREATE OR REPLACE FUNCTION ingest_reports(p_app bigint, p_config_version bigint,
                                          p_report_ids text[], p_user_ids text[], p_days date[],
                                          p_ats timestamptz[], p_sampled boolean[], p_kinds text[],
                                          p_sources text[], p_app_versions text[], p_builds text[],
                                          p_oses text[], p_os_versions text[], p_os_builds text[],
                                          p_devices text[], p_client_timestamps text[],
                                          p_durations bigint[], p_key1s text[], p_key2s text[],
                                          p_pending boolean[], p_frames1 text[], p_frames2 text[],
                                          p_waits text[], p_raw text[], p_symbolized text[],
                                          p_raw_stacks text[], p_symbolized_stacks text[],
                                          p_stack_hashes uuid[], p_stack_bodies text[],
                                          p_culprits text[])
RETURNS TABLE (outcome text, report bigint)
LANGUAGE plpgsql
-- Every table this function reads it reads by key, one probe per report
-- of the batch: the lookups are written as scalar subqueries, which the
-- planner runs per row and cannot turn into joins. Joins planned while a
-- new install's tables were empty (merge and hash joins reading every row
-- of the app) stayed in the session's cached plans as the tables grew;
-- left to itself, the planner also re-planned one statement at every call
-- (a fifth of the call). One plan per statement, built once, always on
-- the indexes:
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  n integer := coalesce(cardinality(p_report_ids), 0);
  outcomes text[];
  ids bigint[];
  listed boolean[];
  stored_at integer[];
  stored_ids bigint[];
  current_version bigint;
  quota integer;
  distinct_ids bigint;
  part_days date[];
  part_day date;
  offer record;
  i integer;
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;
  IF (SELECT count(DISTINCT coalesce(c, -1))
        FROM unnest(ARRAY[cardinality(p_user_ids), cardinality(p_days), cardinality(p_ats),
                          cardinality(p_sampled), cardinality(p_kinds), cardinality(p_sources),
                          cardinality(p_app_versions), cardinality(p_builds),
                          cardinality(p_oses), cardinality(p_os_versions),
                          cardinality(p_os_builds), cardinality(p_devices),
                          cardinality(p_client_timestamps), cardinality(p_durations),
                          cardinality(p_key1s), cardinality(p_key2s), cardinality(p_pending),
                          cardinality(p_frames1), cardinality(p_frames2),
                          cardinality(p_waits), cardinality(p_raw),
                          cardinality(p_symbolized), cardinality(p_raw_stacks),
                          cardinality(p_symbolized_stacks), cardinality(p_culprits),
                          n]) AS c) <> 1
     OR cardinality(p_stack_hashes) IS DISTINCT FROM cardinality(p_stack_bodies) THEN
    RAISE EXCEPTION 'ingest_reports: arrays of different lengths';
  END IF;
  SELECT c.version, c.daily_quota,
         (SELECT count(DISTINCT r) FROM unnest(p_report_ids) r),
         (SELECT array_agg(DISTINCT d) FROM unnest(p_days) d)
    INTO current_version, quota, distinct_ids, part_days
    FROM app_config c WHERE c.app_id = p_app;
  IF current_version IS DISTINCT FROM p_config_version THEN
    RETURN QUERY SELECT 'stale'::text, NULL::bigint FROM generate_series(1, n);
    RETURN;
  END IF;
  IF distinct_ids <> n THEN
    RAISE EXCEPTION 'ingest_reports: a report_id twice in one batch';
  END IF;

  FOREACH part_day IN ARRAY part_days LOOP
    PERFORM ensure_report_partition(p_app, part_day);
  END LOOP;
  -- The reports' combinations of dimensions (schema/039), before any
  -- other lock, in one order: a batch adding one waits only for another
  -- adding the same, which holds nothing else yet. Only the new ones: an
  -- insert that conflicts would still use up a number. Nearly every batch
  -- has none: a probe per report says so in a quarter of the time an
  -- insert of nothing takes (17 against 72 µs for 8 reports).
  IF EXISTS (SELECT 1 FROM unnest(p_app_versions, p_os_versions, p_devices, p_kinds)
                             AS u(v, o, d, k)
              WHERE NOT EXISTS (SELECT 1 FROM dim_combos c
                                 WHERE c.app_id = p_app AND c.app_version = coalesce(u.v, '')
                                   AND c.os_version = coalesce(u.o, '')
                                   AND c.device = coalesce(u.d, '') AND c.kind = u.k)) THEN
    INSERT INTO dim_combos (app_id, app_version, os_version, device, kind)
    SELECT p_app, x.v, x.o, x.d, x.k
      FROM (SELECT DISTINCT coalesce(v, '') AS v, coalesce(o, '') AS o, coalesce(d, '') AS d, k
              FROM unnest(p_app_versions, p_os_versions, p_devices, p_kinds) AS u(v, o, d, k)) x
     WHERE NOT EXISTS (SELECT 1 FROM dim_combos c
                        WHERE c.app_id = p_app AND c.app_version = x.v AND c.os_version = x.o
                          AND c.device = x.d AND c.kind = x.k)
     ORDER BY x.v COLLATE "C", x.o COLLATE "C", x.d COLLATE "C", x.k COLLATE "C"
    ON CONFLICT DO NOTHING;
  END IF;
  PERFORM pg_advisory_xact_lock(h)
     FROM (SELECT DISTINCT hashtextextended(p_app || '/' || u, 7) AS h
             FROM unnest(p_user_ids) u ORDER BY 1) users;
  -- Shared locks on the images the batch finds missing: a debug file of
  -- one commits (st_arrivals_record takes the lock exclusively) either
  -- after this batch, so its arrival finds these waits, or before the
  -- statements below, which then see it (late_arrivals).
  PERFORM pg_advisory_xact_lock_shared(h)
     FROM (SELECT DISTINCT hashtextextended('image/' || w.uuid::text, 7) AS h
             FROM unnest(p_waits) j,
                  jsonb_to_recordset(j::jsonb) AS w(uuid uuid, reason text)
            WHERE w.reason IN ('missing', 'system_missing') ORDER BY 1) images;

  -- Every report's fate but the key insert's race. The users' locks make
  -- the quota rows read here the ones counted on below.
  WITH r AS (
    SELECT o, rid, uid, day, sampled,
           (SELECT k.id FROM report_keys k WHERE k.app_id = p_app AND k.report_id = rid)
             AS old_id,
           EXISTS (SELECT 1 FROM whitelist w
                    WHERE w.app_id = p_app AND w.user_id = uid
                      AND (w.expires_at IS NULL OR w.expires_at > arrived)) AS listed
      FROM unnest(p_report_ids, p_user_ids, p_days, p_ats, p_sampled)
             WITH ORDINALITY AS u(rid, uid, day, arrived, sampled, o)
  ), ranked AS (
    SELECT r.*,
           count(*) FILTER (WHERE old_id IS NULL AND NOT listed AND sampled)
             OVER (PARTITION BY uid, day ORDER BY o) AS nth,
           coalesce((SELECT q.reports FROM user_quota q
                      WHERE q.app_id = p_app AND q.day = r.day AND q.user_id = r.uid), 0)
             AS used
      FROM r
  )
  SELECT array_agg(CASE WHEN old_id IS NOT NULL THEN 'duplicate'
                        WHEN listed THEN 'stored'
                        WHEN NOT sampled THEN 'not_sampled'
                        WHEN used + nth > quota THEN 'quota'
                        ELSE 'stored' END ORDER BY o),
         array_agg(old_id ORDER BY o), array_agg(listed ORDER BY o)
    INTO outcomes, ids, listed
    FROM ranked;

  -- Everything stored, in one statement: the keys first (a report whose
  -- key insert lost is left out of the rest), then the quota counts, the
  -- rows, the waits, the deltas and both levels' new groups, locked level
  -- by level in key order.
  WITH keyed AS (
    INSERT INTO report_keys (app_id, report_id, id, received_day)
    SELECT p_app, p_report_ids[o], nextval('report_ids'), p_days[o]
      FROM generate_subscripts(p_report_ids, 1) o
     WHERE outcomes[o] = 'stored' ORDER BY o
    ON CONFLICT (app_id, report_id) DO NOTHING
    RETURNING report_keys.report_id, report_keys.id
  ), stored AS (
    SELECT o, k.id FROM generate_subscripts(p_report_ids, 1) o
      JOIN keyed k ON k.report_id = p_report_ids[o]
     WHERE outcomes[o] = 'stored'
  ), quota_counts AS (
    INSERT INTO user_quota AS q (app_id, day, user_id, reports)
    SELECT p_app, p_days[o], p_user_ids[o], count(*) FROM stored
     WHERE NOT listed[o] GROUP BY 2, 3
    ON CONFLICT (app_id, day, user_id) DO UPDATE SET reports = q.reports + excluded.reports
  ), wait_rows AS (
    -- A report listing one UUID under two images waits for it once.
    SELECT DISTINCT ON (s.id, w.uuid) s.id AS report, p_days[s.o] AS day, w.uuid,
           w.image_name, w.arch, w.reason, coalesce(p_app_versions[s.o], '') AS version,
           p_ats[s.o] AS at
      FROM stored s,
           jsonb_to_recordset(p_waits[s.o]::jsonb) AS w(uuid uuid, image_name text,
                                                        arch text, reason text)
     WHERE p_waits[s.o] <> '[]'
  ), waits_per_report AS (
    SELECT report, array_agg(uuid ORDER BY uuid) AS waits,
           string_agg(wait_reason_code(reason), '' ORDER BY uuid) AS reasons
      FROM wait_rows GROUP BY report
  ), report_rows AS (
    INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id, kind,
                         source, app_version, build, os, os_version, os_build, device,
                         client_timestamp, duration_ms, key1, key2, pending, raw,
                         symbolized, raw_stacks, symbolized_stacks, in_sample, waits,
                         wait_reasons)
    SELECT s.id, p_app, p_days[o], p_ats[o], p_report_ids[o], p_user_ids[o], p_kinds[o],
           p_sources[o], p_app_versions[o], p_builds[o], p_oses[o], p_os_versions[o],
           p_os_builds[o], p_devices[o], p_client_timestamps[o], p_durations[o],
           p_key1s[o], p_key2s[o], p_pending[o], p_raw[o], p_symbolized[o],
           stack_bytes(p_raw_stacks[o]::uuid[]), stack_bytes(p_symbolized_stacks[o]::uuid[]),
           NOT listed[o],
           stack_bytes(w.waits), w.reasons
      FROM stored s LEFT JOIN waits_per_report w ON w.report = s.id
  ), image_counts AS (
    -- dsyms/missing's counters, locked in key order after the groups'
    -- rows (the statement runs this part after them), as
    -- the reprocessor does: the system image's row of the day is in
    -- every batch.
    -- The versions and time (schema/046) ride on the same upsert: the
    -- array is rewritten only when the batch brings a new version
    -- (app_versions_kept). The name kept is a full path when a report
    -- gave one (image_name_kept), for dsyms/missing's `path`.
    INSERT INTO image_waits AS c (app_id, uuid, day, reason, image_name, arch, reports,
                                  app_versions, last_seen)
    SELECT p_app, uuid, day, reason,
           image_name_kept(max(image_name) FILTER (WHERE strpos(image_name, '/') > 0),
                           max(image_name)),
           max(arch), count(*),
           array_agg(DISTINCT version), max(at) FROM wait_rows
     GROUP BY uuid, day, reason ORDER BY uuid, day, reason
    ON CONFLICT (app_id, uuid, day, reason) DO UPDATE SET
      reports = c.reports + excluded.reports,
      image_name = image_name_kept(c.image_name, excluded.image_name),
      arch = greatest(c.arch, excluded.arch),
      app_versions = app_versions_kept(c.app_versions, excluded.app_versions),
      last_seen = greatest(c.last_seen, excluded.last_seen)
  ), late_arrivals AS (
    -- Symbolized before a file of the image committed (the server's
    -- two-second cache, or a request already under way): the file is
    -- older than this statement, which the image locks above make
    -- start after its transaction ended, so its arrival may have been
    -- handled before these waits were visible. A new arrival moves them.
    INSERT INTO debug_file_arrivals (app_id, uuid)
    SELECT p_app, w.uuid
      FROM (SELECT DISTINCT uuid FROM wait_rows
             WHERE reason IN ('missing', 'system_missing')) AS w
     WHERE EXISTS (SELECT 1 FROM debug_files d WHERE d.app_id = p_app AND d.uuid = w.uuid)
        OR EXISTS (SELECT 1 FROM system_symbols s WHERE s.uuid = w.uuid)
  ), counted AS (
    SELECT lvl::smallint AS level,
           CASE lvl WHEN 1 THEN p_key1s[o] ELSE p_key2s[o] END AS key,
           CASE lvl WHEN 1 THEN NULL ELSE p_key1s[o] END AS parent,
           CASE lvl WHEN 1 THEN p_frames1[o] ELSE p_frames2[o] END AS frames,
           p_user_ids[o] AS uid, p_ats[o] AS at, p_culprits[o]::jsonb AS culprit, o,
           p_durations[o] AS ms,
           lvl = 1 AND p_pending[o]
             AND frames_wait_for_symbols(p_frames1[o]::jsonb, p_waits[o]::jsonb) AS waits
      FROM stored, (VALUES (1), (2)) AS l(lvl)
  ), deltas AS (
    -- What group_days, group_dim_days, group_facet_days and the call
    -- tree's group_stack_days count, left for fold_group_deltas (schema/026,
    -- 042): no row of theirs locked here.
    INSERT INTO group_deltas (app_id, report, key1, key2, day, at, user_id, app_version,
                              os_version, device, kind, in_sample, duration_ms, stack,
                              stack_frames, stack_ms)
    SELECT p_app, id, p_key1s[o], p_key2s[o], p_days[o], p_ats[o], p_user_ids[o],
           coalesce(p_app_versions[o], ''), coalesce(p_os_versions[o], ''),
           coalesce(p_devices[o], ''), p_kinds[o], NOT listed[o], p_durations[o], x.stack,
           x.frames, x.ms
      FROM stored, representative_stack(p_symbolized[o], p_symbolized_stacks[o]::uuid[]) x
  ), counters AS (
    -- A group new to the app, with its frames; its counters (reports,
    -- users, seen, severity) come from the deltas (fold_group_deltas), so
    -- a popular group's row and its sketch are not rewritten by every
    -- batch. An existing row is left out before the insert: an upsert
    -- locks the row it conflicts with even when it writes nothing, and
    -- waits for the fold, which holds a popular group's row until it
    -- commits. Only a race with another batch creating the same group
    -- reaches ON CONFLICT. A scalar subquery, not NOT EXISTS: an anti-join
    -- is planned from the statistics (see the culprits below).
    INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users, users_hll,
                             first_seen, last_seen, culprit, waits_for_symbols)
    SELECT p_app, c.level, c.key, min(c.parent), (array_agg(c.frames ORDER BY c.o))[1]::jsonb,
           0, 0, hll_empty(12, 5, 1024, 0), min(c.at), max(c.at),
           (array_agg(c.culprit ORDER BY c.culprit->>'function' IS NULL, c.culprit IS NULL,
                      c.o))[1],
           bool_and(c.waits)
      FROM counted c
     WHERE (SELECT true FROM groups x
             WHERE x.app_id = p_app AND x.level = c.level AND x.key = c.key) IS NULL
     GROUP BY c.level, c.key
     ORDER BY c.level, c.key COLLATE "C"
    ON CONFLICT (app_id, level, key) DO UPDATE SET
      culprit = better_culprit(g.culprit, excluded.culprit)
      WHERE better_culprit(g.culprit, excluded.culprit) IS DISTINCT FROM g.culprit
    RETURNING g.level, g.key, g.xmax = 0 AS made, g.waits_for_symbols, g.culprit, g.frames
  ), announced AS (
    -- A level-1 group made by this batch is new (SPEC §11.2), unless it is
    -- temporary: its reports wait for a debug file and will move to their
    -- real group, whose rules apply then (lifecycle_report_moved).
    INSERT INTO group_events (app_id, key1, type, status, cause, version)
    SELECT p_app, m.key, 'new_group', 'open', 'report',
           (SELECT nullif(p_app_versions[c.o], '') FROM counted c
             WHERE c.level = 1 AND c.key = m.key ORDER BY c.o LIMIT 1)
      FROM counters m
     WHERE m.level = 1 AND m.made AND NOT m.waits_for_symbols
     ORDER BY m.key COLLATE "C"
    ON CONFLICT (app_id, key1) WHERE type = 'new_group' DO NOTHING
  ), searched AS (
    -- A group made by this batch is found by its culprit and keyed frames
    -- (schema/046, culprit_terms) even if its stack is lost: the fold
    -- adds only stacks' terms. Once per group made, nothing for the
    -- batches that make none (nearly every one); its terms locked after
    -- its row (run before announced, which reads the rows after it), as
    -- every writer of a group's terms holds the group's row first.
    INSERT INTO group_terms (app_id, level, key, term)
    SELECT DISTINCT p_app, m.level, m.key, x.term
      FROM counters m, culprit_terms(m.culprit, m.frames) AS x(term)
     WHERE m.made
     ORDER BY 2, 3, 4
    ON CONFLICT DO NOTHING
  )
  SELECT array_agg(o::integer), array_agg(id) INTO stored_at, stored_ids FROM stored;

  -- An existing group's culprit, written (and its row locked) only when
  -- the batch's best beats it (one with a function, else any, the first
  -- in arrival order: better_culprit's preference). Which ones is read on
  -- the rows as this statement sees them, without a lock, so a batch
  -- whose culprits change nothing (nearly every one) neither locks nor
  -- waits for the fold; then one UPDATE by primary key each, in key
  -- order, after the rows above and before the stacks. Lookups by
  -- the whole key, not a join: a join's plan follows groups' statistics,
  -- and one made while the table was empty (a new database, until
  -- autovacuum first analyzes it) scanned every group per batch.
  FOR offer IN
    SELECT o.level, o.key, o.culprit
      FROM (SELECT l.lvl::smallint AS level,
                   CASE l.lvl WHEN 1 THEN p_key1s[o] ELSE p_key2s[o] END AS key,
                   (array_agg(p_culprits[o]::jsonb
                              ORDER BY p_culprits[o]::jsonb->>'function' IS NULL, o))[1]
                     AS culprit
              FROM unnest(stored_at) o, (VALUES (1), (2)) AS l(lvl)
             WHERE p_culprits[o] IS NOT NULL
             GROUP BY 1, 2) o
     WHERE (SELECT better_culprit(x.culprit, o.culprit) IS DISTINCT FROM x.culprit
              FROM groups x WHERE x.app_id = p_app AND x.level = o.level AND x.key = o.key)
     ORDER BY o.level, o.key COLLATE "C"
  LOOP
    UPDATE groups g SET culprit = better_culprit(g.culprit, offer.culprit)
     WHERE g.app_id = p_app AND g.level = offer.level AND g.key = offer.key
       AND better_culprit(g.culprit, offer.culprit) IS DISTINCT FROM g.culprit;
  END LOOP;

  -- Resolved groups that got a report from their fix's version or later
  -- regress (SPEC §11.1). Read without a lock: nearly every batch finds no
  -- key of its resolved and stops at these probes (the app's first, by
  -- the status index, then its keys'). The status rows are
  -- locked after the groups rows, as the fold and reprocessing take them.
  -- A report waiting in a temporary group raises nothing.
  IF EXISTS (SELECT 1 FROM group_status s WHERE s.app_id = p_app AND s.status = 'resolved')
     AND EXISTS (SELECT 1 FROM unnest(stored_at) o
                  WHERE (SELECT true FROM group_status s
                          WHERE s.app_id = p_app AND s.key1 = p_key1s[o]
                            AND s.status = 'resolved')) THEN
    PERFORM regress_groups(p_app, array_agg(p_key1s[o]),
                           array_agg(coalesce(p_app_versions[o], '')))
       FROM unnest(stored_at) o
      WHERE NOT (p_pending[o]
                 AND frames_wait_for_symbols(p_frames1[o]::jsonb, p_waits[o]::jsonb))
     HAVING count(*) > 0;
  END IF;

  -- The stored reports' stacks, last (keep_stacks).
  PERFORM keep_stacks(p_app, array_agg(h), array_agg(p_days[o]), p_stack_hashes, p_stack_bodies)
     FROM unnest(stored_at) o,
          unnest(p_raw_stacks[o]::uuid[] || p_symbolized_stacks[o]::uuid[]) h
    HAVING count(*) > 0;

  FOR i IN 1..coalesce(cardinality(stored_at), 0) LOOP
    ids[stored_at[i]] := stored_ids[i];
  END LOOP;
  -- Lost key inserts (rare): the report stored under that key stands.
  FOR i IN SELECT o FROM generate_subscripts(outcomes, 1) o
            WHERE outcomes[o] = 'stored' AND ids[o] IS NULL LOOP
    outcomes[i] := 'duplicate';
    ids[i] := (SELECT k.id FROM report_keys k
                WHERE k.app_id = p_app AND k.report_id = p_report_ids[i]);
  END LOOP;

  RETURN QUERY SELECT outcomes[o], ids[o] FROM generate_subscripts(outcomes, 1) o ORDER BY o;
END $$;
COMMENT ON FUNCTION ingest_reports(bigint, bigint, text[], text[], date[], timestamptz[],
                                   boolean[], text[], text[], text[], text[], text[], text[],
                                   text[], text[], text[], bigint[], text[], text[], boolean[],
                                   text[], text[], text[], text[], text[], text[], text[], uuid[],
                                   text[], text[]) IS
  'Stores a batch of ingested reports of one app with their policy checks, waits and group counts, in the caller''s transaction, in a few statements over the whole batch, taking locks in the one order every batch uses; returns per report, in order, the outcome (stored, duplicate, not_sampled, quota, or stale when p_config_version is not the policy''s current version) and our report id. Groups keep the better culprit (better_culprit).';
