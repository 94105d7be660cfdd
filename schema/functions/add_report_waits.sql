-- add_report_waits — the images one report waits for (report_waits).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
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
COMMENT ON FUNCTION add_report_waits(bigint, bigint, date, jsonb) IS
  'Records which images report p_report waits for (report_waits), from a JSON array.';
