-- move_report — reprocessing: one report moved to its new groups
-- (docs/STORAGE.md "Reprocessing").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- It keeps ingest_reports' order of row locks (the user; level 1's two
-- groups in key order; level 2's), moving the report's one group_daily
-- row and keeping that row's first and last seen exact. Whether the user
-- joins the new groups is asked before the row moves, whether they leave
-- the old ones after.

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
