-- 003_ingest_functions.sql — the per-report ingest transaction as one
-- function call.
--
-- Storing a report is a dozen statements (idempotency key, whitelist,
-- quota, report row, waits, two levels of group counters). Sent one by one
-- from the server they cost a dozen network round trips, and measured on
-- loopback those round trips were most of the server's time (bench/ingest.sh,
-- docs/PERFORMANCE.md). Here they run inside PostgreSQL: the server sends one
-- statement, which is its own transaction.

-- Counts one report into (p_delta +1) or out of (-1) its groups of both
-- levels. Every caller takes the rows in the same order (level 1 before 2;
-- per level group_users, then groups, then group_daily), so concurrent
-- transactions queue instead of deadlocking.
CREATE FUNCTION count_report(p_app bigint, p_key1 text, p_key2 text, p_frames1 jsonb,
                             p_frames2 jsonb, p_day date, p_at timestamptz,
                             p_app_version text, p_os_version text, p_device text,
                             p_kind text, p_user text, p_delta integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  lvl smallint;
  k text;
  parent text;
  frames jsonb;
  new_user boolean;
  left_reports bigint;
BEGIN
  IF p_delta NOT IN (1, -1) THEN
    RAISE EXCEPTION 'count_report: delta must be 1 or -1, not %', p_delta;
  END IF;
  FOR lvl IN 1..2 LOOP
    k := CASE lvl WHEN 1 THEN p_key1 ELSE p_key2 END;
    parent := CASE lvl WHEN 1 THEN NULL ELSE p_key1 END;
    frames := CASE lvl WHEN 1 THEN p_frames1 ELSE p_frames2 END;
    IF p_delta = 1 THEN
      -- xmax = 0: the row was inserted, so this user is new to the group.
      INSERT INTO group_users AS u (app_id, level, key, user_id, reports)
      VALUES (p_app, lvl, k, p_user, 1)
      ON CONFLICT (app_id, level, key, user_id) DO UPDATE SET reports = u.reports + 1
      RETURNING (xmax = 0) INTO new_user;
      INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                               first_seen, last_seen)
      VALUES (p_app, lvl, k, parent, frames, 1, CASE WHEN new_user THEN 1 ELSE 0 END, p_at, p_at)
      ON CONFLICT (app_id, level, key) DO UPDATE SET
        reports = g.reports + 1,
        users = g.users + CASE WHEN new_user THEN 1 ELSE 0 END,
        first_seen = least(g.first_seen, excluded.first_seen),
        last_seen = greatest(g.last_seen, excluded.last_seen);
      INSERT INTO group_daily AS d (app_id, level, key, day, app_version, os_version,
                                    device, kind, user_id, reports)
      VALUES (p_app, lvl, k, p_day, p_app_version, p_os_version, p_device, p_kind,
              p_user, 1)
      ON CONFLICT (app_id, level, key, day, app_version, os_version, device, kind,
                   user_id) DO UPDATE SET reports = d.reports + 1;
    ELSE
      -- group_users keeps one row per user with reports in the group, so
      -- a count reaching zero drops the row and the group's user.
      UPDATE group_users SET reports = reports - 1
       WHERE app_id = p_app AND level = lvl AND key = k AND user_id = p_user
         AND reports > 0
      RETURNING reports INTO left_reports;
      IF left_reports = 0 THEN
        DELETE FROM group_users
         WHERE app_id = p_app AND level = lvl AND key = k AND user_id = p_user;
      END IF;
      UPDATE groups SET
        reports = reports - 1,
        users = users - CASE WHEN left_reports = 0 THEN 1 ELSE 0 END
       WHERE app_id = p_app AND level = lvl AND key = k AND reports > 0;
      UPDATE group_daily SET reports = reports - 1
       WHERE app_id = p_app AND level = lvl AND key = k AND day = p_day
         AND app_version = p_app_version AND os_version = p_os_version
         AND device = p_device AND kind = p_kind AND user_id = p_user
      RETURNING reports INTO left_reports;
      IF left_reports = 0 THEN
        DELETE FROM group_daily
         WHERE app_id = p_app AND level = lvl AND key = k AND day = p_day
           AND app_version = p_app_version AND os_version = p_os_version
           AND device = p_device AND kind = p_kind AND user_id = p_user;
      END IF;
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION count_report(bigint, text, text, jsonb, jsonb, date, timestamptz,
                                 text, text, text, text, text, integer) IS
  'Adds (+1) or removes (-1) one report to/from its level-1 and level-2 groups: groups.reports and .users, group_users, group_daily. Ingest and reprocessing both count through it, so the counters follow one rule.';

-- p_waits: [{"uuid", "image_name", "arch" (or null), "reason"}].
CREATE FUNCTION add_report_waits(p_app bigint, p_report bigint, p_day date, p_waits jsonb)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO report_waits (app_id, uuid, report, received_day, image_name, arch, reason)
  SELECT p_app, w.uuid, p_report, p_day, w.image_name, w.arch, w.reason
    FROM jsonb_to_recordset(p_waits) AS w(uuid uuid, image_name text, arch text, reason text)
  ON CONFLICT (app_id, uuid, report) DO UPDATE SET reason = excluded.reason
$$;
COMMENT ON FUNCTION add_report_waits(bigint, bigint, date, jsonb) IS
  'Records which images report p_report waits for (report_waits), from a JSON array.';

-- Stores one report: the whole of docs/STORAGE.md "Ingest of one report".
-- p_report holds the metadata and keys (the object store/reports.c builds),
-- p_frames1/2 the identities of both group levels, p_waits the images it
-- waits for (add_report_waits); p_raw and p_symbolized are stored as they
-- come. Outcomes: stored, duplicate (a resend: the first report's id,
-- nothing changed), not_sampled, quota (nothing changed).
CREATE FUNCTION ingest_report(p_app bigint, p_day date, p_at timestamptz,
                              p_sampled boolean, p_quota integer, p_report jsonb,
                              p_frames1 jsonb, p_frames2 jsonb, p_waits jsonb,
                              p_raw jsonb, p_symbolized jsonb,
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
                                  jsonb, jsonb, jsonb, jsonb, jsonb) IS
  'Stores one ingested report with its policy checks, waits and group counts, in the caller''s transaction; returns the outcome and our report id.';
