-- 006_cached_policy.sql — one round trip per ingested report.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- An ingest request used to read the app's policy in a statement of its
-- own before storing (and its credential and debug files in two more).
-- The server now keeps the policy in memory; so that a cached policy is
-- never applied once a change has committed, every change bumps a version,
-- the server sends the version it used, and ingest_report refuses a report
-- made under another one (outcome 'stale': nothing changed, the server
-- reads the policy again and remakes the report). The daily quota is read
-- here, from the row itself.

ALTER TABLE app_config ADD COLUMN version bigint NOT NULL DEFAULT 1;
COMMENT ON COLUMN app_config.version IS
  'Incremented by every change to the row. Servers cache the policy and send the version they used to ingest_report, which answers stale when it is not the current one.';

DROP FUNCTION ingest_report(bigint, date, timestamptz, boolean, integer, jsonb, jsonb,
                            jsonb, jsonb, json, json);
CREATE FUNCTION ingest_report(p_app bigint, p_config_version bigint, p_day date,
                              p_at timestamptz, p_sampled boolean, p_report jsonb,
                              p_frames1 jsonb, p_frames2 jsonb, p_waits jsonb,
                              p_raw json, p_symbolized json,
                              OUT outcome text, OUT report bigint)
LANGUAGE plpgsql AS $$
DECLARE
  rid text := p_report->>'report_id';
  uid text := p_report->>'user_id';
  listed boolean;
  current_version bigint;
  quota integer;
BEGIN
  SELECT c.version, c.daily_quota INTO current_version, quota
    FROM app_config c WHERE c.app_id = p_app;
  IF current_version IS DISTINCT FROM p_config_version THEN
    outcome := 'stale';
    RETURN;
  END IF;

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
    SELECT p_app, p_day, uid, 1 WHERE quota > 0
    ON CONFLICT (app_id, day, user_id) DO UPDATE SET reports = q.reports + 1
      WHERE q.reports < quota;
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
COMMENT ON FUNCTION ingest_report(bigint, bigint, date, timestamptz, boolean, jsonb,
                                  jsonb, jsonb, jsonb, json, json) IS
  'Stores one ingested report with its policy checks, waits and group counts, in the caller''s transaction; returns the outcome (stored, duplicate, not_sampled, quota, or stale when p_config_version is not the policy''s current version) and our report id.';
