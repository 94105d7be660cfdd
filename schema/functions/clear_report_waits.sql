-- clear_report_waits — forgets every wait of one report (reprocessing
-- moved it, or gave up on it) and takes it out of dsyms/missing's counts.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION clear_report_waits(p_report bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- A counter its last report leaves is deleted; the others count down.
  -- Both read the rows as they were before the statement, so each row is
  -- either deleted or updated.
  WITH gone AS (
    DELETE FROM report_waits WHERE report = p_report
    RETURNING app_id, uuid, received_day, reason
  ), n AS (
    SELECT app_id, uuid, received_day AS day, reason, count(*) AS reports
      FROM gone GROUP BY 1, 2, 3, 4
  ), emptied AS (
    DELETE FROM image_waits c USING n
     WHERE c.app_id = n.app_id AND c.uuid = n.uuid AND c.day = n.day
       AND c.reason = n.reason AND c.reports <= n.reports
  )
  UPDATE image_waits c SET reports = c.reports - n.reports FROM n
   WHERE c.app_id = n.app_id AND c.uuid = n.uuid AND c.day = n.day AND c.reason = n.reason
     AND c.reports > n.reports;
END $$;
COMMENT ON FUNCTION clear_report_waits(bigint) IS
  'Deletes the waits of report p_report and counts them out of image_waits, deleting the counters they emptied.';
