-- 004_report_storage.sql — cheaper report rows on the ingest path.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Profiled under bench/ingest.sh, PostgreSQL spent a third of its time on
-- each report's two documents: building jsonb from text (parsing, sorting
-- keys) and compressing the result with pglz. Nothing queries inside them
-- on the ingest path — the server writes them whole and reads them whole —
-- so they become json (the text, validated, stored as sent) compressed with
-- lz4, several times faster than pglz at a similar ratio on this JSON.

ALTER TABLE reports
  ALTER COLUMN raw TYPE json USING raw::json,
  ALTER COLUMN symbolized TYPE json USING symbolized::json;
ALTER TABLE reports
  ALTER COLUMN raw SET COMPRESSION lz4,
  ALTER COLUMN symbolized SET COMPRESSION lz4;

COMMENT ON COLUMN reports.symbolized IS
  'Images with their status, every thread symbolized, the representative stack, keys and group frames. A representative stack taken from a thread is stored as {"source","thread"} without frames (they are that thread''s); st_report_json puts them back.';

-- A set-returning SQL function is planned again at every call; plpgsql
-- keeps its plan for the session.
CREATE OR REPLACE FUNCTION add_report_waits(p_app bigint, p_report bigint, p_day date,
                                            p_waits jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF jsonb_array_length(p_waits) = 0 THEN
    RETURN;
  END IF;
  INSERT INTO report_waits (app_id, uuid, report, received_day, image_name, arch, reason)
  SELECT p_app, w.uuid, p_report, p_day, w.image_name, w.arch, w.reason
    FROM jsonb_to_recordset(p_waits) AS w(uuid uuid, image_name text, arch text, reason text)
  ON CONFLICT (app_id, uuid, report) DO UPDATE SET reason = excluded.reason;
END $$;

-- The same steps as 003's, taking the two documents as json.
DROP FUNCTION ingest_report(bigint, date, timestamptz, boolean, integer, jsonb, jsonb,
                            jsonb, jsonb, jsonb, jsonb);
CREATE FUNCTION ingest_report(p_app bigint, p_day date, p_at timestamptz,
                              p_sampled boolean, p_quota integer, p_report jsonb,
                              p_frames1 jsonb, p_frames2 jsonb, p_waits jsonb,
                              p_raw json, p_symbolized json,
                              OUT outcome text, OUT report bigint)
LANGUAGE plpgsql AS $$
DECLARE
  rid text := p_report->>'report_id';
  uid text := p_report->>'user_id';
  listed boolean;
BEGIN
  -- Before any row lock: creating a partition waits for every open insert
  -- into the app's reports, which must not wait for us in turn.
  PERFORM ensure_report_partition(p_app, p_day);

  SELECT id INTO report FROM report_keys WHERE app_id = p_app AND report_id = rid;
  IF FOUND THEN
    outcome := 'duplicate';
    RETURN;
  END IF;

  listed := EXISTS (SELECT 1 FROM whitelist
                     WHERE app_id = p_app AND user_id = uid
                       AND (expires_at IS NULL OR expires_at > p_at));
  IF NOT listed THEN
    IF NOT p_sampled THEN
      outcome := 'not_sampled';
      RETURN;
    END IF;
    -- The row lock taken by ON CONFLICT serializes one user's concurrent
    -- uploads and the WHERE refuses the increment past the quota, so no
    -- interleaving stores more than the quota.
    INSERT INTO user_quota AS q (app_id, day, user_id, reports)
    SELECT p_app, p_day, uid, 1 WHERE p_quota > 0
    ON CONFLICT (app_id, day, user_id) DO UPDATE SET reports = q.reports + 1
      WHERE q.reports < p_quota;
    IF NOT FOUND THEN
      outcome := 'quota';
      RETURN;
    END IF;
  END IF;

  INSERT INTO report_keys (app_id, report_id, id, received_day)
  VALUES (p_app, rid, nextval('report_ids'), p_day)
  ON CONFLICT (app_id, report_id) DO NOTHING
  RETURNING id INTO report;
  IF NOT FOUND THEN
    -- A concurrent resend committed first: it stands, and this one gives
    -- its unit of quota back.
    IF NOT listed THEN
      UPDATE user_quota SET reports = reports - 1
       WHERE app_id = p_app AND day = p_day AND user_id = uid;
    END IF;
    SELECT id INTO report FROM report_keys WHERE app_id = p_app AND report_id = rid;
    outcome := 'duplicate';
    RETURN;
  END IF;

  INSERT INTO reports (id, app_id, received_day, received_at, report_id, user_id, kind,
                       source, app_version, build, os, os_version, os_build, device,
                       client_timestamp, duration_ms, key1, key2, pending, raw,
                       symbolized)
  VALUES (report, p_app, p_day, p_at, rid, uid, p_report->>'kind', p_report->>'source',
          p_report->>'app_version', p_report->>'build', p_report->>'os',
          p_report->>'os_version', p_report->>'os_build', p_report->>'device',
          p_report->>'client_timestamp', (p_report->>'duration_ms')::bigint,
          p_report->>'key1', p_report->>'key2', (p_report->>'pending')::boolean,
          p_raw, p_symbolized);
  PERFORM add_report_waits(p_app, report, p_day, p_waits);
  -- Last: a popular group's rows are the contended ones, so they stay
  -- locked only from here to the commit.
  PERFORM count_report(p_app, p_report->>'key1', p_report->>'key2',
                       p_frames1, p_frames2, p_day, p_at,
                       coalesce(p_report->>'app_version', ''),
                       coalesce(p_report->>'os_version', ''),
                       coalesce(p_report->>'device', ''), p_report->>'kind', uid, 1);
  outcome := 'stored';
END $$;
COMMENT ON FUNCTION ingest_report(bigint, date, timestamptz, boolean, integer, jsonb,
                                  jsonb, jsonb, jsonb, json, json) IS
  'Stores one ingested report with its policy checks, waits and group counts, in the caller''s transaction; returns the outcome and our report id.';
