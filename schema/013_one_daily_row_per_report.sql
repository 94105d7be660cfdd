-- 013_one_daily_row_per_report.sql — group_daily holds one row per report
-- for both levels instead of one per level.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- A level-2 key is made of the innermost four frames and its level-1 key
-- of the innermost two, so every level-2 group has one parent, and a
-- level-1 group's per-day rows were exactly the sum of its level-2 groups'
-- rows: each report wrote the same counts twice. Now a row carries both
-- keys, (key1, user_id) leading its primary key: "is this user new to the
-- level-1 group" probes (app_id, key1, user_id), "new to the level-2
-- group" (app_id, key1, user_id, key2), both on the primary key as before.
-- A level-2 group's per-day series reads its rows by (app_id, key2).
--
-- Why: group_daily was a fifth of the one ingest backend's time (pgbench,
-- one client calling ingest_reports on 8-report batches built from stored
-- reports: 1.99 ms a call, 1.55 ms without the group_daily rows and their
-- probes); one heap row, one conflict check and one BRIN entry fewer per
-- report took 1.83-1.85 ms against 1.90-1.98 ms (docs/PERFORMANCE.md).

CREATE TABLE group_daily_by_report (
  app_id bigint NOT NULL,
  key1 text NOT NULL,
  user_id text NOT NULL,
  key2 text NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  os_version text NOT NULL,
  device text NOT NULL,
  kind text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  PRIMARY KEY (app_id, key1, user_id, key2, day, app_version, os_version, device, kind)
);
INSERT INTO group_daily_by_report (app_id, key1, user_id, key2, day, app_version,
                                   os_version, device, kind, reports)
SELECT d.app_id, g.parent_key, d.user_id, d.key, d.day, d.app_version, d.os_version,
       d.device, d.kind, d.reports
  FROM group_daily d
  JOIN groups g ON g.app_id = d.app_id AND g.level = 2 AND g.key = d.key
 WHERE d.level = 2;
DROP TABLE group_daily;
ALTER TABLE group_daily_by_report RENAME TO group_daily;
ALTER INDEX group_daily_by_report_pkey RENAME TO group_daily_pkey;
COMMENT ON TABLE group_daily IS
  'Reports per level-1 group, level-2 group, user, UTC day, app version, OS version, device and kind (one row serves both levels: a level-1 group''s rows are its level-2 groups''). The group list''s date range and filters sum these (reports) and count distinct user_id (users), the per-day series groups them by day, and a group''s distinct users (groups.users) are its distinct user_id here. Kept forever like the group counters.';
COMMENT ON INDEX group_daily_pkey IS
  'One counter per combination, updated at ingest; its prefixes (app_id, key1, user_id) and (app_id, key1, user_id, key2) tell whether a user already has reports in a level-1 or level-2 group, (app_id, key1) reads a level-1 group''s rows.';
CREATE INDEX group_daily_key2_idx ON group_daily (app_id, key2);
COMMENT ON INDEX group_daily_key2_idx IS 'Reads a level-2 group''s rows (its per-day series).';
CREATE INDEX group_daily_day_brin ON group_daily USING brin (day)
  WITH (autosummarize = on);
COMMENT ON INDEX group_daily_day_brin IS
  'Group lists over a date range without scanning all history (rows arrive in day order).';

-- ingest_reports as 010 made it and 012 changed it (the documents stored as
-- text), with its daily and fresh parts on the new table; 010 explains the
-- rest.
CREATE OR REPLACE FUNCTION ingest_reports(p_app bigint, p_config_version bigint,
                               p_report_ids text[], p_user_ids text[], p_days date[],
                               p_ats timestamptz[], p_sampled boolean[], p_kinds text[],
                               p_sources text[], p_app_versions text[], p_builds text[],
                               p_oses text[], p_os_versions text[], p_os_builds text[],
                               p_devices text[], p_client_timestamps text[],
                               p_durations bigint[], p_key1s text[], p_key2s text[],
                               p_pending boolean[], p_frames1 text[], p_frames2 text[],
                               p_waits text[], p_raw text[], p_symbolized text[])
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
                          cardinality(p_symbolized), n]) AS c) <> 1 THEN
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
  PERFORM pg_advisory_xact_lock(h)
     FROM (SELECT DISTINCT hashtextextended(p_app || '/' || u, 7) AS h
             FROM unnest(p_user_ids) u ORDER BY 1) users;

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
  -- rows, the waits and both levels' counters. Every part sees the tables
  -- as they were before the statement, which is what "new to the group"
  -- asks of group_daily; the group rows are locked level by level in key
  -- order.
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
  ), report_rows AS (
    INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id, kind,
                         source, app_version, build, os, os_version, os_build, device,
                         client_timestamp, duration_ms, key1, key2, pending, raw,
                         symbolized)
    SELECT id, p_app, p_days[o], p_ats[o], p_report_ids[o], p_user_ids[o], p_kinds[o],
           p_sources[o], p_app_versions[o], p_builds[o], p_oses[o], p_os_versions[o],
           p_os_builds[o], p_devices[o], p_client_timestamps[o], p_durations[o],
           p_key1s[o], p_key2s[o], p_pending[o], p_raw[o], p_symbolized[o]
      FROM stored
  ), waits AS (
    -- A report listing one UUID under two images waits for it once.
    INSERT INTO report_waits (app_id, uuid, report, received_day, image_name, arch, reason)
    SELECT DISTINCT ON (s.id, w.uuid) p_app, w.uuid, s.id, p_days[s.o], w.image_name,
           w.arch, w.reason
      FROM stored s,
           jsonb_to_recordset(p_waits[s.o]::jsonb) AS w(uuid uuid, image_name text,
                                                        arch text, reason text)
     WHERE p_waits[s.o] <> '[]'
    ON CONFLICT (app_id, uuid, report) DO UPDATE SET reason = excluded.reason
  ), counted AS (
    SELECT lvl::smallint AS level,
           CASE lvl WHEN 1 THEN p_key1s[o] ELSE p_key2s[o] END AS key,
           CASE lvl WHEN 1 THEN NULL ELSE p_key1s[o] END AS parent,
           CASE lvl WHEN 1 THEN p_frames1[o] ELSE p_frames2[o] END AS frames,
           p_user_ids[o] AS uid, p_days[o] AS day,
           coalesce(p_app_versions[o], '') AS app_version,
           coalesce(p_os_versions[o], '') AS os_version, coalesce(p_devices[o], '') AS device,
           p_kinds[o] AS kind, p_ats[o] AS at, o
      FROM stored, (VALUES (1), (2)) AS l(lvl)
  ), daily AS (
    -- One row per report for both levels: the level-1 group's rows are
    -- those of its level-2 groups.
    INSERT INTO group_daily AS d (app_id, key1, user_id, key2, day, app_version, os_version,
                                  device, kind, reports)
    SELECT p_app, p_key1s[o], p_user_ids[o], p_key2s[o], p_days[o],
           coalesce(p_app_versions[o], ''), coalesce(p_os_versions[o], ''),
           coalesce(p_devices[o], ''), p_kinds[o], count(*)
      FROM stored GROUP BY 2, 3, 4, 5, 6, 7, 8, 9
    ON CONFLICT (app_id, key1, user_id, key2, day, app_version, os_version, device, kind)
    DO UPDATE SET reports = d.reports + excluded.reports
  ), fresh AS (
    -- A level-1 key is its own key1, a level-2 key's key1 is its parent;
    -- either way one probe of the primary key's prefix.
    SELECT level, key, count(DISTINCT uid) AS users
      FROM counted c
     WHERE (SELECT true FROM group_daily g
             WHERE g.app_id = p_app AND g.key1 = coalesce(c.parent, c.key)
               AND g.user_id = c.uid AND (c.level = 1 OR g.key2 = c.key) LIMIT 1) IS NULL
     GROUP BY level, key
  ), counters AS (
    INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                             first_seen, last_seen)
    SELECT p_app, c.level, c.key, min(c.parent), (array_agg(c.frames ORDER BY c.o))[1]::jsonb,
           count(*), coalesce(min(f.users), 0), min(c.at), max(c.at)
      FROM counted c LEFT JOIN fresh f ON f.level = c.level AND f.key = c.key
     GROUP BY c.level, c.key
     ORDER BY c.level, c.key COLLATE "C"
    ON CONFLICT (app_id, level, key) DO UPDATE SET
      reports = g.reports + excluded.reports,
      users = g.users + excluded.users,
      first_seen = least(g.first_seen, excluded.first_seen),
      last_seen = greatest(g.last_seen, excluded.last_seen)
  )
  SELECT array_agg(o::integer), array_agg(id) INTO stored_at, stored_ids FROM stored;

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

-- One report counted out of, or into, one group's counters; the caller
-- moves its group_daily row and says whether the user leaves or joins.
CREATE FUNCTION count_out_of_group(p_app bigint, p_level smallint, p_key text,
                                   p_leaves integer)
RETURNS void LANGUAGE sql AS $$
  UPDATE groups SET reports = reports - 1, users = users - p_leaves
   WHERE app_id = p_app AND level = p_level AND key = p_key AND reports > 0;
$$;
CREATE FUNCTION count_into_group(p_app bigint, p_level smallint, p_key text,
                                 p_parent_key text, p_frames jsonb, p_at timestamptz,
                                 p_joins integer)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                           first_seen, last_seen)
  VALUES (p_app, p_level, p_key, p_parent_key, p_frames, 1, p_joins, p_at, p_at)
  ON CONFLICT (app_id, level, key) DO UPDATE SET
    reports = g.reports + 1,
    users = g.users + excluded.users,
    first_seen = least(g.first_seen, excluded.first_seen),
    last_seen = greatest(g.last_seen, excluded.last_seen);
$$;

COMMENT ON FUNCTION count_out_of_group(bigint, smallint, text, integer) IS
  'Reprocessing: one report less in a group''s counters (and one user less when p_leaves is 1); the caller holds the user''s lock and moved the report''s group_daily row.';
COMMENT ON FUNCTION count_into_group(bigint, smallint, text, text, jsonb, timestamptz,
                                     integer) IS
  'Reprocessing: one report more in a group''s counters, the group made if new (one user more when p_joins is 1); the caller holds the user''s lock and moved the report''s group_daily row.';

-- move_report keeps 009's order of row locks (the user; level 1's two
-- groups in key order; level 2's), now moving the report's one group_daily
-- row. Whether the user joins the new groups is asked before the row
-- moves, whether they leave the old ones after.
CREATE OR REPLACE FUNCTION move_report(p_app bigint, p_from_key1 text, p_from_key2 text,
                                       p_to_key1 text, p_to_key2 text, p_to_frames1 jsonb,
                                       p_to_frames2 jsonb, p_day date, p_at timestamptz,
                                       p_app_version text, p_os_version text,
                                       p_device text, p_kind text, p_user text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  joins1 integer;
  joins2 integer;
  leaves1 integer;
  leaves2 integer;
  left_reports bigint;
  lvl integer;
  from_key text;
  to_key text;
  parent text;
  frames jsonb;
  joins integer;
  leaves integer;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_app || '/' || p_user, 7));
  joins1 := CASE WHEN EXISTS (SELECT 1 FROM group_daily
                               WHERE app_id = p_app AND key1 = p_to_key1
                                 AND user_id = p_user) THEN 0 ELSE 1 END;
  joins2 := CASE WHEN EXISTS (SELECT 1 FROM group_daily
                               WHERE app_id = p_app AND key1 = p_to_key1
                                 AND user_id = p_user AND key2 = p_to_key2) THEN 0 ELSE 1 END;

  UPDATE group_daily SET reports = reports - 1
   WHERE app_id = p_app AND key1 = p_from_key1 AND user_id = p_user AND key2 = p_from_key2
     AND day = p_day AND app_version = p_app_version AND os_version = p_os_version
     AND device = p_device AND kind = p_kind AND reports > 0
  RETURNING reports INTO left_reports;
  IF left_reports = 0 THEN
    DELETE FROM group_daily
     WHERE app_id = p_app AND key1 = p_from_key1 AND user_id = p_user
       AND key2 = p_from_key2 AND day = p_day AND app_version = p_app_version
       AND os_version = p_os_version AND device = p_device AND kind = p_kind;
  END IF;
  INSERT INTO group_daily AS d (app_id, key1, user_id, key2, day, app_version, os_version,
                                device, kind, reports)
  VALUES (p_app, p_to_key1, p_user, p_to_key2, p_day, p_app_version, p_os_version, p_device,
          p_kind, 1)
  ON CONFLICT (app_id, key1, user_id, key2, day, app_version, os_version, device, kind)
  DO UPDATE SET reports = d.reports + 1;

  -- A report found in no old row (left_reports NULL) takes no user away.
  leaves1 := CASE WHEN left_reports = 0 AND NOT EXISTS (
                      SELECT 1 FROM group_daily
                       WHERE app_id = p_app AND key1 = p_from_key1 AND user_id = p_user)
                  THEN 1 ELSE 0 END;
  leaves2 := CASE WHEN left_reports = 0 AND NOT EXISTS (
                      SELECT 1 FROM group_daily
                       WHERE app_id = p_app AND key1 = p_from_key1 AND user_id = p_user
                         AND key2 = p_from_key2)
                  THEN 1 ELSE 0 END;

  FOR lvl IN 1..2 LOOP
    from_key := CASE lvl WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
    to_key := CASE lvl WHEN 1 THEN p_to_key1 ELSE p_to_key2 END;
    parent := CASE lvl WHEN 1 THEN NULL ELSE p_to_key1 END;
    frames := CASE lvl WHEN 1 THEN p_to_frames1 ELSE p_to_frames2 END;
    joins := CASE lvl WHEN 1 THEN joins1 ELSE joins2 END;
    leaves := CASE lvl WHEN 1 THEN leaves1 ELSE leaves2 END;
    IF from_key COLLATE "C" <= to_key COLLATE "C" THEN
      PERFORM count_out_of_group(p_app, lvl::smallint, from_key, leaves);
      PERFORM count_into_group(p_app, lvl::smallint, to_key, parent, frames, p_at, joins);
    ELSE
      PERFORM count_into_group(p_app, lvl::smallint, to_key, parent, frames, p_at, joins);
      PERFORM count_out_of_group(p_app, lvl::smallint, from_key, leaves);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION move_report(bigint, text, text, text, text, jsonb, jsonb, date,
                                timestamptz, text, text, text, text, text) IS
  'Reprocessing: counts one report out of its old groups and into its new ones (groups.reports and .users, its group_daily row), under the user''s lock, level 1 before level 2 and within a level in key order, as ingest_reports locks them.';

DROP FUNCTION count_report_level(bigint, smallint, text, text, jsonb, date, timestamptz, text,
                                 text, text, text, text, integer);
