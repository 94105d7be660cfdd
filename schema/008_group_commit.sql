-- 008_group_commit.sql — many reports per transaction.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Under load most of a one-report transaction is the transaction itself:
-- its start, its commit record and WAL flush, the round trip, the wake-ups
-- of two processes. The server now stores the reports that arrive while a
-- transaction is in flight together, in one call of ingest_reports
-- (server/ingest_commit.c), and answers each only once it committed.
--
-- Several such transactions run at once (and several servers may share the
-- database), each holding the locks of many reports until its commit, so
-- they must all take them in one order or deadlock: first the users, by
-- the hash their advisory lock uses; then the level-1 groups by key; then
-- the level-2 groups by key. Rows of one user (quota, group_daily) are
-- touched only under that user's lock.

-- Counts one report into (p_delta +1) or out of (-1) one group of one
-- level. The caller holds the (app, user) advisory lock (see count_report):
-- a user is new to a group when group_daily has no other row of theirs in
-- it, and leaves it with their last row.
CREATE FUNCTION count_report_level(p_app bigint, p_level smallint, p_key text,
                                   p_parent_key text, p_frames jsonb, p_day date,
                                   p_at timestamptz, p_app_version text,
                                   p_os_version text, p_device text, p_kind text,
                                   p_user text, p_delta integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  fresh_row boolean;
  user_change integer;
  left_reports bigint;
BEGIN
  IF p_delta = 1 THEN
    -- xmax = 0: the row was inserted rather than updated.
    INSERT INTO group_daily AS d (app_id, level, key, user_id, day, app_version,
                                  os_version, device, kind, reports)
    VALUES (p_app, p_level, p_key, p_user, p_day, p_app_version, p_os_version, p_device,
            p_kind, 1)
    ON CONFLICT (app_id, level, key, user_id, day, app_version, os_version, device,
                 kind) DO UPDATE SET reports = d.reports + 1
    RETURNING (xmax = 0) INTO fresh_row;
    user_change := CASE WHEN fresh_row AND NOT EXISTS (
        SELECT 1 FROM group_daily
         WHERE app_id = p_app AND level = p_level AND key = p_key AND user_id = p_user
           AND (day, app_version, os_version, device, kind)
               <> (p_day, p_app_version, p_os_version, p_device, p_kind))
      THEN 1 ELSE 0 END;
    INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                             first_seen, last_seen)
    VALUES (p_app, p_level, p_key, p_parent_key, p_frames, 1, user_change, p_at, p_at)
    ON CONFLICT (app_id, level, key) DO UPDATE SET
      reports = g.reports + 1,
      users = g.users + user_change,
      first_seen = least(g.first_seen, excluded.first_seen),
      last_seen = greatest(g.last_seen, excluded.last_seen);
  ELSIF p_delta = -1 THEN
    UPDATE group_daily SET reports = reports - 1
     WHERE app_id = p_app AND level = p_level AND key = p_key AND user_id = p_user
       AND day = p_day AND app_version = p_app_version AND os_version = p_os_version
       AND device = p_device AND kind = p_kind AND reports > 0
    RETURNING reports INTO left_reports;
    user_change := 0;
    IF left_reports = 0 THEN
      DELETE FROM group_daily
       WHERE app_id = p_app AND level = p_level AND key = p_key AND user_id = p_user
         AND day = p_day AND app_version = p_app_version AND os_version = p_os_version
         AND device = p_device AND kind = p_kind;
      user_change := CASE WHEN NOT EXISTS (
          SELECT 1 FROM group_daily
           WHERE app_id = p_app AND level = p_level AND key = p_key AND user_id = p_user)
        THEN -1 ELSE 0 END;
    END IF;
    UPDATE groups SET reports = reports - 1, users = users + user_change
     WHERE app_id = p_app AND level = p_level AND key = p_key AND reports > 0;
  ELSE
    RAISE EXCEPTION 'count_report_level: delta must be 1 or -1, not %', p_delta;
  END IF;
END $$;
COMMENT ON FUNCTION count_report_level(bigint, smallint, text, text, jsonb, date,
                                       timestamptz, text, text, text, text, text, integer) IS
  'Adds (+1) or removes (-1) one report to/from one group of one level (groups.reports and .users, group_daily); the caller holds the (app, user) advisory lock.';

-- Reprocessing counts one report at a time through this; the rule is
-- count_report_level's.
CREATE OR REPLACE FUNCTION count_report(p_app bigint, p_key1 text, p_key2 text,
                                        p_frames1 jsonb, p_frames2 jsonb, p_day date,
                                        p_at timestamptz, p_app_version text,
                                        p_os_version text, p_device text, p_kind text,
                                        p_user text, p_delta integer)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_app || '/' || p_user, 7));
  PERFORM count_report_level(p_app, 1::smallint, p_key1, NULL, p_frames1, p_day, p_at,
                             p_app_version, p_os_version, p_device, p_kind, p_user,
                             p_delta);
  PERFORM count_report_level(p_app, 2::smallint, p_key2, p_key1, p_frames2, p_day, p_at,
                             p_app_version, p_os_version, p_device, p_kind, p_user,
                             p_delta);
END $$;

-- Stores a batch of reports of one app, all made under policy version
-- p_config_version. Element i of every array belongs to report i:
-- p_meta its metadata, keys and arrival (the JSON object store/reports.c
-- builds), p_frames1/2 both levels' identities, p_waits the images it
-- waits for, p_raw and p_symbolized its two documents. Returns one row per
-- report, in order: stored, duplicate (a resend: the first report's id,
-- nothing changed), not_sampled, quota (nothing changed), or stale for
-- every report when the policy is no longer p_config_version.
CREATE FUNCTION ingest_reports(p_app bigint, p_config_version bigint, p_meta text[],
                               p_frames1 text[], p_frames2 text[], p_waits text[],
                               p_raw text[], p_symbolized text[])
RETURNS TABLE (outcome text, report bigint)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  n integer := coalesce(cardinality(p_meta), 0);
  meta jsonb[];
  outcomes text[];
  ids bigint[];
  current_version bigint;
  quota integer;
  i integer;
  part_day date;
  user_lock bigint;
  m jsonb;
  rid text;
  uid text;
  received date;
  listed boolean;
  new_id bigint;
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
  SELECT array_agg(x::jsonb ORDER BY o) INTO meta
    FROM unnest(p_meta) WITH ORDINALITY AS u(x, o);

  -- Before any row lock: creating a partition waits for every open insert
  -- into the app's reports, which must not wait for us in turn.
  FOR part_day IN SELECT DISTINCT (x->>'day')::date FROM unnest(meta) x LOOP
    PERFORM ensure_report_partition(p_app, part_day);
  END LOOP;
  -- Then every user of the batch, in one order for every transaction.
  FOR user_lock IN
    SELECT DISTINCT hashtextextended(p_app || '/' || (x->>'user_id'), 7)
      FROM unnest(meta) x ORDER BY 1
  LOOP
    PERFORM pg_advisory_xact_lock(user_lock);
  END LOOP;

  outcomes := array_fill(NULL::text, ARRAY[n]);
  ids := array_fill(NULL::bigint, ARRAY[n]);
  FOR i IN 1..n LOOP
    m := meta[i];
    rid := m->>'report_id';
    uid := m->>'user_id';
    received := (m->>'day')::date;
    SELECT k.id INTO new_id FROM report_keys k WHERE k.app_id = p_app AND k.report_id = rid;
    IF FOUND THEN
      outcomes[i] := 'duplicate';
      ids[i] := new_id;
      CONTINUE;
    END IF;
    listed := EXISTS (SELECT 1 FROM whitelist w
                       WHERE w.app_id = p_app AND w.user_id = uid
                         AND (w.expires_at IS NULL
                              OR w.expires_at > (m->>'at')::timestamptz));
    IF NOT listed THEN
      IF NOT (m->>'sampled')::boolean THEN
        outcomes[i] := 'not_sampled';
        CONTINUE;
      END IF;
      -- The WHERE refuses the increment past the quota; the user's lock
      -- makes the read and the increment one step.
      INSERT INTO user_quota AS q (app_id, day, user_id, reports)
      SELECT p_app, received, uid, 1 WHERE quota > 0
      ON CONFLICT (app_id, day, user_id) DO UPDATE SET reports = q.reports + 1
        WHERE q.reports < quota;
      IF NOT FOUND THEN
        outcomes[i] := 'quota';
        CONTINUE;
      END IF;
    END IF;

    INSERT INTO report_keys (app_id, report_id, id, received_day)
    VALUES (p_app, rid, nextval('report_ids'), received)
    ON CONFLICT (app_id, report_id) DO NOTHING
    RETURNING report_keys.id INTO new_id;
    IF NOT FOUND THEN
      -- A concurrent resend under another user id committed first: it
      -- stands, and this one gives its unit of quota back.
      IF NOT listed THEN
        UPDATE user_quota SET reports = reports - 1
         WHERE app_id = p_app AND day = received AND user_id = uid;
      END IF;
      SELECT k.id INTO new_id FROM report_keys k WHERE k.app_id = p_app AND k.report_id = rid;
      outcomes[i] := 'duplicate';
      ids[i] := new_id;
      CONTINUE;
    END IF;

    INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id, kind,
                         source, app_version, build, os, os_version, os_build, device,
                         client_timestamp, duration_ms, key1, key2, pending, raw,
                         symbolized)
    VALUES (new_id, p_app, received, (m->>'at')::timestamptz, rid, uid, m->>'kind',
            m->>'source', m->>'app_version', m->>'build', m->>'os', m->>'os_version',
            m->>'os_build', m->>'device', m->>'client_timestamp',
            (m->>'duration_ms')::bigint, m->>'key1', m->>'key2',
            (m->>'pending')::boolean, p_raw[i]::json, p_symbolized[i]::json);
    PERFORM add_report_waits(p_app, new_id, received, p_waits[i]::jsonb);
    outcomes[i] := 'stored';
    ids[i] := new_id;
  END LOOP;

  -- Last, the contended rows: a popular group's stay locked only from here
  -- to the commit. Level 1 by key, then level 2 by key.
  FOR i IN SELECT o FROM generate_subscripts(meta, 1) o
            WHERE outcomes[o] = 'stored' ORDER BY meta[o]->>'key1' COLLATE "C"
  LOOP
    m := meta[i];
    PERFORM count_report_level(p_app, 1::smallint, m->>'key1', NULL, p_frames1[i]::jsonb,
                               (m->>'day')::date, (m->>'at')::timestamptz,
                               coalesce(m->>'app_version', ''),
                               coalesce(m->>'os_version', ''), coalesce(m->>'device', ''),
                               m->>'kind', m->>'user_id', 1);
  END LOOP;
  FOR i IN SELECT o FROM generate_subscripts(meta, 1) o
            WHERE outcomes[o] = 'stored' ORDER BY meta[o]->>'key2' COLLATE "C"
  LOOP
    m := meta[i];
    PERFORM count_report_level(p_app, 2::smallint, m->>'key2', m->>'key1',
                               p_frames2[i]::jsonb, (m->>'day')::date,
                               (m->>'at')::timestamptz, coalesce(m->>'app_version', ''),
                               coalesce(m->>'os_version', ''), coalesce(m->>'device', ''),
                               m->>'kind', m->>'user_id', 1);
  END LOOP;

  RETURN QUERY SELECT outcomes[o], ids[o] FROM generate_subscripts(outcomes, 1) o ORDER BY o;
END $$;
COMMENT ON FUNCTION ingest_reports(bigint, bigint, text[], text[], text[], text[], text[],
                                   text[]) IS
  'Stores a batch of ingested reports of one app with their policy checks, waits and group counts, in the caller''s transaction, taking locks in the one order every batch uses; returns per report, in order, the outcome (stored, duplicate, not_sampled, quota, or stale when p_config_version is not the policy''s current version) and our report id.';

DROP FUNCTION ingest_report(bigint, bigint, date, timestamptz, boolean, jsonb, jsonb, jsonb,
                            jsonb, json, json);
