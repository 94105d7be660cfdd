-- 009_reprocess_lock_order.sql — reprocessing takes its locks in the order
-- ingest batches do.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Moving a report to its new groups counted it out of both old groups
-- (level 1, level 2) and then into both new ones: a level-2 row locked
-- before a level-1 row, against the order ingest_reports keeps (users,
-- level-1 groups by key, level-2 groups by key). A batch holding the new
-- level-1 group and waiting for the old level-2 one deadlocked with it
-- until PostgreSQL broke the tie a second later. move_report counts per
-- level, the two groups of a level in key order.

CREATE FUNCTION move_report(p_app bigint, p_from_key1 text, p_from_key2 text,
                            p_to_key1 text, p_to_key2 text, p_to_frames1 jsonb,
                            p_to_frames2 jsonb, p_day date, p_at timestamptz,
                            p_app_version text, p_os_version text, p_device text,
                            p_kind text, p_user text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  lvl integer;
  from_key text;
  to_key text;
  parent text;
  frames jsonb;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_app || '/' || p_user, 7));
  FOR lvl IN 1..2 LOOP
    from_key := CASE lvl WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
    to_key := CASE lvl WHEN 1 THEN p_to_key1 ELSE p_to_key2 END;
    parent := CASE lvl WHEN 1 THEN NULL ELSE p_to_key1 END;
    frames := CASE lvl WHEN 1 THEN p_to_frames1 ELSE p_to_frames2 END;
    IF from_key COLLATE "C" <= to_key COLLATE "C" THEN
      PERFORM count_report_level(p_app, lvl::smallint, from_key, NULL::text, NULL::jsonb, p_day, p_at,
                                 p_app_version, p_os_version, p_device, p_kind, p_user, -1);
      PERFORM count_report_level(p_app, lvl::smallint, to_key, parent, frames, p_day, p_at,
                                 p_app_version, p_os_version, p_device, p_kind, p_user, 1);
    ELSE
      PERFORM count_report_level(p_app, lvl::smallint, to_key, parent, frames, p_day, p_at,
                                 p_app_version, p_os_version, p_device, p_kind, p_user, 1);
      PERFORM count_report_level(p_app, lvl::smallint, from_key, NULL::text, NULL::jsonb, p_day, p_at,
                                 p_app_version, p_os_version, p_device, p_kind, p_user, -1);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION move_report(bigint, text, text, text, text, jsonb, jsonb, date,
                                timestamptz, text, text, text, text, text) IS
  'Reprocessing: counts one report out of its old groups and into its new ones (groups.reports and .users, group_daily), under the user''s lock, level 1 before level 2 and within a level in key order, as ingest_reports locks them.';

DROP FUNCTION count_report(bigint, text, text, jsonb, jsonb, date, timestamptz, text, text,
                           text, text, text, integer);
