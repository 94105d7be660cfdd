-- 007_users_from_daily.sql — two rows fewer per ingested report.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- group_users kept one row per (group, user) so that groups.users, the
-- distinct users of a group, stayed exact. group_daily already holds one
-- row per (group, day, app version, OS version, device, kind, user), so
-- whether a user is new to a group is a question group_daily answers once
-- its key starts with the user: the table, and its two inserts per report,
-- go.

ALTER TABLE group_daily DROP CONSTRAINT group_daily_pkey;
ALTER TABLE group_daily
  ADD PRIMARY KEY (app_id, level, key, user_id, day, app_version, os_version, device, kind);
COMMENT ON INDEX group_daily_pkey IS
  'One counter per combination, updated at ingest; its prefix (app_id, level, key, user_id) tells whether a user already has reports in a group.';
COMMENT ON TABLE group_daily IS
  'Reports per group, user, UTC day, app version, OS version, device and kind: the group list''s date range and filters sum these (reports) and count distinct user_id (users), the per-day series groups them by day, and a group''s distinct users (groups.users) are its distinct user_id here. Kept forever like the group counters.';

DROP TABLE group_users;

-- Counts one report into (p_delta +1) or out of (-1) its groups of both
-- levels. A user is new to a group when group_daily has no other row of
-- theirs in it, and leaves it with their last row. Two transactions of one
-- user could each miss the other's uncommitted row, so they take a lock on
-- the (app, user) pair first; then the rows in one order (level 1 before
-- 2; per level group_daily, then groups), so concurrent transactions queue
-- instead of deadlocking.
CREATE OR REPLACE FUNCTION count_report(p_app bigint, p_key1 text, p_key2 text,
                                        p_frames1 jsonb, p_frames2 jsonb, p_day date,
                                        p_at timestamptz, p_app_version text,
                                        p_os_version text, p_device text, p_kind text,
                                        p_user text, p_delta integer)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  lvl smallint;
  k text;
  fresh_row boolean;
  user_change integer;
  left_reports bigint;
BEGIN
  IF p_delta NOT IN (1, -1) THEN
    RAISE EXCEPTION 'count_report: delta must be 1 or -1, not %', p_delta;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended(p_app || '/' || p_user, 7));
  FOR lvl IN 1..2 LOOP
    k := CASE lvl WHEN 1 THEN p_key1 ELSE p_key2 END;
    IF p_delta = 1 THEN
      -- xmax = 0: the row was inserted rather than updated.
      INSERT INTO group_daily AS d (app_id, level, key, user_id, day, app_version,
                                    os_version, device, kind, reports)
      VALUES (p_app, lvl, k, p_user, p_day, p_app_version, p_os_version, p_device,
              p_kind, 1)
      ON CONFLICT (app_id, level, key, user_id, day, app_version, os_version, device,
                   kind) DO UPDATE SET reports = d.reports + 1
      RETURNING (xmax = 0) INTO fresh_row;
      user_change := CASE WHEN fresh_row AND NOT EXISTS (
          SELECT 1 FROM group_daily
           WHERE app_id = p_app AND level = lvl AND key = k AND user_id = p_user
             AND (day, app_version, os_version, device, kind)
                 <> (p_day, p_app_version, p_os_version, p_device, p_kind))
        THEN 1 ELSE 0 END;
      INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                               first_seen, last_seen)
      VALUES (p_app, lvl, k, CASE lvl WHEN 1 THEN NULL ELSE p_key1 END,
              CASE lvl WHEN 1 THEN p_frames1 ELSE p_frames2 END, 1, user_change, p_at,
              p_at)
      ON CONFLICT (app_id, level, key) DO UPDATE SET
        reports = g.reports + 1,
        users = g.users + user_change,
        first_seen = least(g.first_seen, excluded.first_seen),
        last_seen = greatest(g.last_seen, excluded.last_seen);
    ELSE
      UPDATE group_daily SET reports = reports - 1
       WHERE app_id = p_app AND level = lvl AND key = k AND user_id = p_user
         AND day = p_day AND app_version = p_app_version AND os_version = p_os_version
         AND device = p_device AND kind = p_kind AND reports > 0
      RETURNING reports INTO left_reports;
      user_change := 0;
      IF left_reports = 0 THEN
        DELETE FROM group_daily
         WHERE app_id = p_app AND level = lvl AND key = k AND user_id = p_user
           AND day = p_day AND app_version = p_app_version
           AND os_version = p_os_version AND device = p_device AND kind = p_kind;
        user_change := CASE WHEN NOT EXISTS (
            SELECT 1 FROM group_daily
             WHERE app_id = p_app AND level = lvl AND key = k AND user_id = p_user)
          THEN -1 ELSE 0 END;
      END IF;
      UPDATE groups SET reports = reports - 1, users = users + user_change
       WHERE app_id = p_app AND level = lvl AND key = k AND reports > 0;
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION count_report(bigint, text, text, jsonb, jsonb, date, timestamptz,
                                 text, text, text, text, text, integer) IS
  'Adds (+1) or removes (-1) one report to/from its level-1 and level-2 groups: groups.reports and .users, group_daily. Ingest and reprocessing both count through it, so the counters follow one rule.';
