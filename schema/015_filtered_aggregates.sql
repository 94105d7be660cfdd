-- 015_filtered_aggregates.sql — first and last seen per group_daily row,
-- and app_dimensions: the app's versions, OS versions, devices and kinds
-- per day.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: with a date range or a filter, a group's first/last seen were the
-- group's all-time ones (groups.first_seen/last_seen), and the dashboard's
-- filters had no list of values to pick from. Both are answered from
-- aggregates kept at ingest (SPEC §8): group_daily rows now carry the
-- first and last received_at of their reports, and app_dimensions holds
-- one counter per app, day, dimension and value. ingest_reports writes
-- both in the statement that already writes group_daily (one more small
-- upsert per batch: a handful of rows, one per distinct day, dimension and
-- value); move_report keeps the moved row's bounds exact. app_dimensions
-- does not depend on groups, so reprocessing leaves it alone; like
-- group_daily it keeps its history through retention.

ALTER TABLE group_daily ADD COLUMN first_seen timestamptz, ADD COLUMN last_seen timestamptz;
-- From the stored reports where their day is still kept...
UPDATE group_daily d SET first_seen = r.first_seen, last_seen = r.last_seen
  FROM (SELECT app_id, key1, user_id, key2, received_day AS day,
               coalesce(app_version, '') AS app_version,
               coalesce(os_version, '') AS os_version, coalesce(device, '') AS device, kind,
               min(received_at) AS first_seen, max(received_at) AS last_seen
          FROM reports GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9) AS r
 WHERE d.app_id = r.app_id AND d.key1 = r.key1 AND d.user_id = r.user_id
   AND d.key2 = r.key2 AND d.day = r.day AND d.app_version = r.app_version
   AND d.os_version = r.os_version AND d.device = r.device AND d.kind = r.kind;
-- ...else (retention dropped the day) the day's bounds narrowed to the
-- level-2 group's first and last seen: the closest the kept counters say.
UPDATE group_daily d
   SET first_seen = least(greatest(d.day::timestamp AT TIME ZONE 'UTC',
                                   coalesce((SELECT g.first_seen FROM groups g
                                              WHERE g.app_id = d.app_id AND g.level = 2
                                                AND g.key = d.key2), '-infinity')),
                          (d.day + 1)::timestamp AT TIME ZONE 'UTC' - interval '1 microsecond'),
       last_seen = greatest(least((d.day + 1)::timestamp AT TIME ZONE 'UTC'
                                  - interval '1 microsecond',
                                  coalesce((SELECT g.last_seen FROM groups g
                                             WHERE g.app_id = d.app_id AND g.level = 2
                                               AND g.key = d.key2), 'infinity')),
                            d.day::timestamp AT TIME ZONE 'UTC')
 WHERE d.first_seen IS NULL;
ALTER TABLE group_daily ALTER COLUMN first_seen SET NOT NULL,
                        ALTER COLUMN last_seen SET NOT NULL;
COMMENT ON COLUMN group_daily.first_seen IS
  'received_at of the row''s first report: a group''s first seen under a date range or filter is the least of its matching rows''.';
COMMENT ON COLUMN group_daily.last_seen IS
  'received_at of the row''s last report (see first_seen).';

CREATE TABLE app_dimensions (
  app_id bigint NOT NULL,
  day date NOT NULL,
  dim text NOT NULL CHECK (dim IN ('version', 'os_version', 'device', 'kind')),
  value text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (app_id, day, dim, value)
);
COMMENT ON TABLE app_dimensions IS
  'Reports received per app, UTC day and value of each filter dimension (app version, OS version, device, kind; '''' when the report had none), with the first and last received_at: the dashboard''s filter pick lists (GET …/dimensions) sum a day range of these. Written by ingest_reports, untouched by reprocessing (it moves reports between groups, not between values), kept forever like group_daily.';
COMMENT ON INDEX app_dimensions_pkey IS
  'One counter per app, day, dimension and value, upserted at ingest; (app_id, day) prefixes read a date range.';
INSERT INTO app_dimensions (app_id, day, dim, value, reports, first_seen, last_seen)
SELECT d.app_id, d.day, x.dim, x.value, sum(d.reports), min(d.first_seen), max(d.last_seen)
  FROM group_daily d,
       LATERAL (VALUES ('version', d.app_version), ('os_version', d.os_version),
                       ('device', d.device), ('kind', d.kind)) AS x(dim, value)
 WHERE d.reports > 0
 GROUP BY 1, 2, 3, 4;

-- ingest_reports as 013 made it, its daily part also keeping first and
-- last seen, and counting app_dimensions; 010 explains the rest.
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
                                  device, kind, reports, first_seen, last_seen)
    SELECT p_app, p_key1s[o], p_user_ids[o], p_key2s[o], p_days[o],
           coalesce(p_app_versions[o], ''), coalesce(p_os_versions[o], ''),
           coalesce(p_devices[o], ''), p_kinds[o], count(*), min(p_ats[o]), max(p_ats[o])
      FROM stored GROUP BY 2, 3, 4, 5, 6, 7, 8, 9
    ON CONFLICT (app_id, key1, user_id, key2, day, app_version, os_version, device, kind)
    DO UPDATE SET reports = d.reports + excluded.reports,
                  first_seen = least(d.first_seen, excluded.first_seen),
                  last_seen = greatest(d.last_seen, excluded.last_seen)
  ), dimensions AS (
    -- Locked after the groups' rows, in key order: every batch takes the
    -- same few rows of the day (its kind's, its versions'), so a fixed
    -- order keeps concurrent servers queueing, not deadlocking.
    INSERT INTO app_dimensions AS a (app_id, day, dim, value, reports, first_seen, last_seen)
    SELECT p_app, p_days[o], x.dim, x.value, count(*), min(p_ats[o]), max(p_ats[o])
      FROM stored,
           LATERAL (VALUES ('version', coalesce(p_app_versions[o], '')),
                           ('os_version', coalesce(p_os_versions[o], '')),
                           ('device', coalesce(p_devices[o], '')),
                           ('kind', p_kinds[o])) AS x(dim, value)
     GROUP BY 2, 3, 4
     ORDER BY 2, 3, 4
    ON CONFLICT (app_id, day, dim, value) DO UPDATE SET
      reports = a.reports + excluded.reports,
      first_seen = least(a.first_seen, excluded.first_seen),
      last_seen = greatest(a.last_seen, excluded.last_seen)
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


-- move_report as 013 made it, keeping the first and last seen of the
-- group_daily rows it moves the report out of and into exact.
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
  old_first timestamptz;
  old_last timestamptz;
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
  RETURNING reports, first_seen, last_seen INTO left_reports, old_first, old_last;
  IF left_reports = 0 THEN
    DELETE FROM group_daily
     WHERE app_id = p_app AND key1 = p_from_key1 AND user_id = p_user
       AND key2 = p_from_key2 AND day = p_day AND app_version = p_app_version
       AND os_version = p_os_version AND device = p_device AND kind = p_kind;
  ELSIF old_first = p_at OR old_last = p_at THEN
    -- The report was the row's first or last. The row's other reports
    -- tell the new bounds: the report row still has its old keys here
    -- (st_group_move runs before st_report_update_symbols), so one report
    -- at p_at is skipped at the end it held. (received_at is whole
    -- seconds, as p_at is: the server's clock, srv_format_time.) A row
    -- whose reports are gone keeps its bound rather than failing the move.
    UPDATE group_daily SET
      first_seen = coalesce((SELECT r.received_at FROM reports r
                     WHERE r.app_id = p_app AND r.received_day = p_day AND r.key1 = p_from_key1
                       AND r.key2 = p_from_key2 AND r.user_id = p_user
                       AND coalesce(r.app_version, '') = p_app_version
                       AND coalesce(r.os_version, '') = p_os_version
                       AND coalesce(r.device, '') = p_device AND r.kind = p_kind
                     ORDER BY r.received_at LIMIT 1
                    OFFSET CASE WHEN old_first = p_at THEN 1 ELSE 0 END), first_seen),
      last_seen = coalesce((SELECT r.received_at FROM reports r
                    WHERE r.app_id = p_app AND r.received_day = p_day AND r.key1 = p_from_key1
                      AND r.key2 = p_from_key2 AND r.user_id = p_user
                      AND coalesce(r.app_version, '') = p_app_version
                      AND coalesce(r.os_version, '') = p_os_version
                      AND coalesce(r.device, '') = p_device AND r.kind = p_kind
                    ORDER BY r.received_at DESC LIMIT 1
                   OFFSET CASE WHEN old_last = p_at THEN 1 ELSE 0 END), last_seen)
     WHERE app_id = p_app AND key1 = p_from_key1 AND user_id = p_user
       AND key2 = p_from_key2 AND day = p_day AND app_version = p_app_version
       AND os_version = p_os_version AND device = p_device AND kind = p_kind;
  END IF;
  INSERT INTO group_daily AS d (app_id, key1, user_id, key2, day, app_version, os_version,
                                device, kind, reports, first_seen, last_seen)
  VALUES (p_app, p_to_key1, p_user, p_to_key2, p_day, p_app_version, p_os_version, p_device,
          p_kind, 1, p_at, p_at)
  ON CONFLICT (app_id, key1, user_id, key2, day, app_version, os_version, device, kind)
  DO UPDATE SET reports = d.reports + 1, first_seen = least(d.first_seen, excluded.first_seen),
                last_seen = greatest(d.last_seen, excluded.last_seen);

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
  'Reprocessing: counts one report out of its old groups and into its new ones (groups.reports and .users, its group_daily row with its first and last seen), under the user''s lock, level 1 before level 2 and within a level in key order, as ingest_reports locks them.';
