-- 010_set_based_ingest.sql — a batch of reports stored by a handful of
-- statements instead of a dozen per report.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- ingest_reports (008) walked its batch report by report: about a dozen
-- statements each (the idempotency key, the whitelist, the quota row, the
-- report row, and per level a function call with two upserts and a probe),
-- every one paying the executor's start and end and PL/pgSQL's expression
-- evaluation. Measured under bench/ingest, that overhead was 40% of the
-- function's time. Here each step is one statement over the whole batch.
--
-- The rules are 008's, decided per batch:
--  * a report whose report_id is stored already is a duplicate (its id);
--  * whitelisted users (unexpired) are stored without sampling or quota;
--  * others: not sampled today -> not_sampled; else the n-th candidate of
--    a user and day in this batch is stored when the reports already
--    counted that day plus n stay within the quota, else quota;
--  * a resend under another user id stored by a concurrent transaction
--    meanwhile loses its key insert: a duplicate (the server never puts one
--    report_id twice into a batch: server/ingest_commit.c);
--  * group counters: a user is new to a group when group_daily had no row
--    of theirs in it before this batch.
-- Locks, in the order every batch and move_report keep: report partitions
-- (before any row lock), the batch's users' advisory locks by hash, then
-- the contended group rows, level 1 by key and level 2 by key, last, so
-- they stay locked only until the commit.

CREATE OR REPLACE FUNCTION ingest_reports(p_app bigint, p_config_version bigint,
                                          p_meta text[], p_frames1 text[], p_frames2 text[],
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
  n integer := coalesce(cardinality(p_meta), 0);
  meta jsonb[];
  outcomes text[];
  ids bigint[];
  listed boolean[];
  current_version bigint;
  quota integer;
  part_day date;
  user_lock bigint;
  lost integer;
  lost_id bigint;
BEGIN
  IF n = 0 THEN
    RETURN;
  END IF;
  IF coalesce(cardinality(p_frames1), 0) <> n OR coalesce(cardinality(p_frames2), 0) <> n
     OR coalesce(cardinality(p_waits), 0) <> n OR coalesce(cardinality(p_raw), 0) <> n
     OR coalesce(cardinality(p_symbolized), 0) <> n THEN
    RAISE EXCEPTION 'ingest_reports: arrays of different lengths';
  END IF;
  SELECT c.version, c.daily_quota INTO current_version, quota
    FROM app_config c WHERE c.app_id = p_app;
  IF current_version IS DISTINCT FROM p_config_version THEN
    RETURN QUERY SELECT 'stale'::text, NULL::bigint FROM generate_series(1, n);
    RETURN;
  END IF;
  meta := p_meta::jsonb[];
  IF (SELECT count(DISTINCT m->>'report_id') FROM unnest(meta) m) <> n THEN
    RAISE EXCEPTION 'ingest_reports: a report_id twice in one batch';
  END IF;

  FOR part_day IN SELECT DISTINCT (m->>'day')::date FROM unnest(meta) m LOOP
    PERFORM ensure_report_partition(p_app, part_day);
  END LOOP;
  FOR user_lock IN
    SELECT DISTINCT hashtextextended(p_app || '/' || (m->>'user_id'), 7)
      FROM unnest(meta) m ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(user_lock);
  END LOOP;

  -- Every report's fate but the key insert's race. The users' locks make
  -- the quota rows read here the ones counted on below.
  WITH r AS (
    SELECT o, m->>'report_id' AS rid, m->>'user_id' AS uid, (m->>'day')::date AS day,
           (m->>'sampled')::boolean AS sampled,
           (SELECT k.id FROM report_keys k
             WHERE k.app_id = p_app AND k.report_id = m->>'report_id') AS old_id,
           EXISTS (SELECT 1 FROM whitelist w
                    WHERE w.app_id = p_app AND w.user_id = m->>'user_id'
                      AND (w.expires_at IS NULL OR w.expires_at > (m->>'at')::timestamptz))
             AS listed
      FROM unnest(meta) WITH ORDINALITY AS u(m, o)
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

  WITH keyed AS (
    INSERT INTO report_keys (app_id, report_id, id, received_day)
    SELECT p_app, m->>'report_id', nextval('report_ids'), (m->>'day')::date
      FROM unnest(meta) WITH ORDINALITY AS u(m, o)
     WHERE outcomes[o] = 'stored' ORDER BY o
    ON CONFLICT (app_id, report_id) DO NOTHING
    RETURNING report_keys.report_id, report_keys.id
  )
  SELECT array_agg(CASE WHEN outcomes[o] = 'stored' AND k.id IS NULL THEN 'lost'
                        ELSE outcomes[o] END ORDER BY o),
         array_agg(coalesce(k.id, ids[o]) ORDER BY o)
    INTO outcomes, ids
    FROM unnest(meta) WITH ORDINALITY AS u(m, o)
    LEFT JOIN keyed k ON outcomes[o] = 'stored' AND k.report_id = m->>'report_id';

  -- Lost key inserts (rare): the report stored under that key stands, and
  -- nothing of this one is counted (quota included: counted below).
  FOR lost IN SELECT o FROM generate_subscripts(outcomes, 1) o WHERE outcomes[o] = 'lost' LOOP
    SELECT k.id INTO STRICT lost_id FROM report_keys k
     WHERE k.app_id = p_app AND k.report_id = meta[lost]->>'report_id';
    outcomes[lost] := 'duplicate';
    ids[lost] := lost_id;
  END LOOP;

  INSERT INTO user_quota AS q (app_id, day, user_id, reports)
  SELECT p_app, (m->>'day')::date, m->>'user_id', count(*)
    FROM unnest(meta) WITH ORDINALITY AS u(m, o)
   WHERE outcomes[o] = 'stored' AND NOT listed[o]
   GROUP BY 2, 3
  ON CONFLICT (app_id, day, user_id) DO UPDATE SET reports = q.reports + excluded.reports;

  INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id, kind,
                       source, app_version, build, os, os_version, os_build, device,
                       client_timestamp, duration_ms, key1, key2, pending, raw, symbolized)
  SELECT ids[o], p_app, (m->>'day')::date, (m->>'at')::timestamptz, m->>'report_id',
         m->>'user_id', m->>'kind', m->>'source', m->>'app_version', m->>'build', m->>'os',
         m->>'os_version', m->>'os_build', m->>'device', m->>'client_timestamp',
         (m->>'duration_ms')::bigint, m->>'key1', m->>'key2', (m->>'pending')::boolean,
         p_raw[o]::json, p_symbolized[o]::json
    FROM unnest(meta) WITH ORDINALITY AS u(m, o)
   WHERE outcomes[o] = 'stored';

  -- A report listing one UUID under two images waits for it once.
  INSERT INTO report_waits (app_id, uuid, report, received_day, image_name, arch, reason)
  SELECT DISTINCT ON (ids[o], w.uuid) p_app, w.uuid, ids[o], (meta[o]->>'day')::date,
         w.image_name, w.arch, w.reason
    FROM generate_subscripts(meta, 1) o,
         jsonb_to_recordset(p_waits[o]::jsonb) AS w(uuid uuid, image_name text, arch text,
                                                    reason text)
   WHERE outcomes[o] = 'stored' AND p_waits[o] <> '[]'
  ON CONFLICT (app_id, uuid, report) DO UPDATE SET reason = excluded.reason;

  -- Both levels' counters in one statement, rows locked level by level in
  -- key order. Every sub-statement sees group_daily as it was before this
  -- statement, which is what "new to the group" asks.
  WITH s AS (
    SELECT lvl::smallint AS level,
           CASE lvl WHEN 1 THEN m->>'key1' ELSE m->>'key2' END AS key,
           CASE lvl WHEN 1 THEN NULL ELSE m->>'key1' END AS parent,
           CASE lvl WHEN 1 THEN p_frames1[o] ELSE p_frames2[o] END AS frames,
           m->>'user_id' AS uid, (m->>'day')::date AS day,
           coalesce(m->>'app_version', '') AS app_version,
           coalesce(m->>'os_version', '') AS os_version, coalesce(m->>'device', '') AS device,
           m->>'kind' AS kind, (m->>'at')::timestamptz AS at, o
      FROM unnest(meta) WITH ORDINALITY AS u(m, o), (VALUES (1), (2)) AS l(lvl)
     WHERE outcomes[o] = 'stored'
  ), daily AS (
    INSERT INTO group_daily AS d (app_id, level, key, user_id, day, app_version, os_version,
                                  device, kind, reports)
    SELECT p_app, level, key, uid, day, app_version, os_version, device, kind, count(*)
      FROM s GROUP BY level, key, uid, day, app_version, os_version, device, kind
    ON CONFLICT (app_id, level, key, user_id, day, app_version, os_version, device, kind)
    DO UPDATE SET reports = d.reports + excluded.reports
  ), fresh AS (
    SELECT level, key, count(DISTINCT uid) AS users
      FROM s
     WHERE (SELECT true FROM group_daily g
             WHERE g.app_id = p_app AND g.level = s.level AND g.key = s.key
               AND g.user_id = s.uid LIMIT 1) IS NULL
     GROUP BY level, key
  )
  INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users, first_seen,
                           last_seen)
  SELECT p_app, s.level, s.key, min(s.parent), (array_agg(s.frames ORDER BY s.o))[1]::jsonb,
         count(*), coalesce(min(f.users), 0), min(s.at), max(s.at)
    FROM s LEFT JOIN fresh f ON f.level = s.level AND f.key = s.key
   GROUP BY s.level, s.key
   ORDER BY s.level, s.key COLLATE "C"
  ON CONFLICT (app_id, level, key) DO UPDATE SET
    reports = g.reports + excluded.reports,
    users = g.users + excluded.users,
    first_seen = least(g.first_seen, excluded.first_seen),
    last_seen = greatest(g.last_seen, excluded.last_seen);

  RETURN QUERY SELECT outcomes[o], ids[o] FROM generate_subscripts(outcomes, 1) o ORDER BY o;
END $$;
COMMENT ON FUNCTION ingest_reports(bigint, bigint, text[], text[], text[], text[], text[],
                                   text[]) IS
  'Stores a batch of ingested reports of one app with their policy checks, waits and group counts, in the caller''s transaction, a statement per step over the whole batch, taking locks in the one order every batch uses; returns per report, in order, the outcome (stored, duplicate, not_sampled, quota, or stale when p_config_version is not the policy''s current version) and our report id.';
