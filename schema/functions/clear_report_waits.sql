-- clear_report_waits — forgets every wait of one report (reprocessing
-- moved it, or gave up on it) and takes it out of dsyms/missing's counts.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION clear_report_waits(p_app bigint, p_day date, p_report bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- The waits as they were (every part of the statement reads the rows as
  -- they were before it); a counter its last report leaves is deleted, the
  -- others count down, so each counter is either deleted or updated.
  WITH gone AS (
    SELECT w.uuid, wait_reason(w.code) AS reason
      FROM reports r,
           unnest(wait_uuids(r.waits), string_to_array(r.wait_reasons, NULL)) AS w(uuid, code)
     WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_report
  ), cleared AS (
    UPDATE reports SET waits = NULL, wait_reasons = NULL
     WHERE app_id = p_app AND received_day = p_day AND id = p_report
       AND waits IS NOT NULL
  ), n AS (
    SELECT uuid, reason, count(*) AS reports FROM gone GROUP BY 1, 2
  ), emptied AS (
    DELETE FROM image_waits c USING n
     WHERE c.app_id = p_app AND c.uuid = n.uuid AND c.day = p_day
       AND c.reason = n.reason AND c.reports <= n.reports
  )
  UPDATE image_waits c SET reports = c.reports - n.reports FROM n
   WHERE c.app_id = p_app AND c.uuid = n.uuid AND c.day = p_day AND c.reason = n.reason
     AND c.reports > n.reports;
END $$;
COMMENT ON FUNCTION clear_report_waits(bigint, date, bigint) IS
  'Empties the waits of report p_report (app p_app, received on p_day) and counts them out of image_waits, deleting the counters they emptied.';
