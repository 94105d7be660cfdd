-- lifecycle_report_moved — a report that waited for a debug file, moved
-- into its real group, counts there as if it had just arrived (SPEC §11.1).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called by reprocessing after move_report and offer_culprit, in their
-- transaction, which holds both groups rows already. Only a move out of a
-- temporary group (waits_for_symbols) counts: a regrouping because names
-- changed (`stallscope reprocess --all`) announces nothing. Of the 500
-- reports a late dSYM moves into 3 real groups, the first into each makes
-- its new_group event and the rest find it (group_events_one_new_group);
-- a real group that was there already may regress, or count the report
-- towards an ignore's until_reports. Spikes are left out: a moved report
-- counts on the day it was received, and an alert for a past day's
-- spike would only be noise.

CREATE OR REPLACE FUNCTION lifecycle_report_moved(p_app bigint, p_report bigint,
                                                  p_from_key1 text, p_to_key1 text,
                                                  p_to_frames1 jsonb, p_to_waits jsonb,
                                                  p_version text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  now_status text;
BEGIN
  IF p_from_key1 = p_to_key1
     OR NOT coalesce((SELECT g.waits_for_symbols FROM groups g
                       WHERE g.app_id = p_app AND g.level = 1 AND g.key = p_from_key1), false)
  THEN
    RETURN;
  END IF;
  IF frames_wait_for_symbols(p_to_frames1, p_to_waits) THEN
    -- Still waiting, for another image: temporary too (the row was made by
    -- this move, or is one such already).
    UPDATE groups g SET waits_for_symbols = true
     WHERE g.app_id = p_app AND g.level = 1 AND g.key = p_to_key1 AND NOT g.waits_for_symbols
       AND NOT EXISTS (SELECT 1 FROM group_events e
                        WHERE e.app_id = p_app AND e.key1 = p_to_key1 AND e.type = 'new_group');
    RETURN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM group_events e
                  WHERE e.app_id = p_app AND e.key1 = p_to_key1 AND e.type = 'new_group') THEN
    INSERT INTO group_events (app_id, key1, type, status, cause, version)
    VALUES (p_app, p_to_key1, 'new_group', 'open', 'report', nullif(p_version, ''))
    ON CONFLICT (app_id, key1) WHERE type = 'new_group' DO NOTHING;
  END IF;
  IF EXISTS (SELECT 1 FROM group_status s
              WHERE s.app_id = p_app AND s.key1 = p_to_key1 AND s.status = 'resolved') THEN
    PERFORM regress_groups(p_app, ARRAY[p_to_key1], ARRAY[coalesce(p_version, '')]);
  END IF;
  -- One report more towards an ignore's until_reports; a report whose
  -- delta still waits is counted there by the fold, under its new key.
  IF NOT EXISTS (SELECT 1 FROM group_deltas d WHERE d.app_id = p_app AND d.report = p_report)
  THEN
    UPDATE group_status s
       SET reports_since = CASE WHEN s.reports_since + 1 > s.until_reports THEN 0
                                ELSE s.reports_since + 1 END,
           status = CASE WHEN s.reports_since + 1 > s.until_reports THEN 'open'
                         ELSE 'ignored' END,
           until_at = CASE WHEN s.reports_since + 1 > s.until_reports THEN NULL
                           ELSE s.until_at END,
           until_reports = CASE WHEN s.reports_since + 1 > s.until_reports THEN NULL
                                ELSE s.until_reports END,
           changed_at = CASE WHEN s.reports_since + 1 > s.until_reports THEN now()
                             ELSE s.changed_at END
     WHERE s.app_id = p_app AND s.key1 = p_to_key1 AND s.status = 'ignored'
       AND s.until_reports IS NOT NULL
    RETURNING s.status INTO now_status;
    IF now_status = 'open' THEN
      INSERT INTO group_events (app_id, key1, type, status, cause)
      VALUES (p_app, p_to_key1, 'open', 'open', 'report');
    END IF;
  END IF;
END $$;
COMMENT ON FUNCTION lifecycle_report_moved(bigint, bigint, text, text, jsonb, jsonb, text) IS
  'Reprocessing: report P_REPORT moved from temporary group P_FROM_KEY1 to P_TO_KEY1 (frames P_TO_FRAMES1, its waits now P_TO_WAITS, version P_VERSION) raises what its arrival there would: new_group once per group, regressed, one report towards an ignore''s until_reports (unless its delta still waits: the fold counts it); nothing when it still waits or did not come from a temporary group.';
