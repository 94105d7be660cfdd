-- clear_report_waits — forgets every wait of one report (reprocessing
-- moved it, or gave up on it) and takes it out of dsyms/missing's counts.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION clear_report_waits(p_app bigint, p_day date, p_report bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  uuids uuid[];
  reasons text[];
  counts bigint[];
BEGIN
  SELECT array_agg(n.uuid ORDER BY n.uuid, n.reason), array_agg(n.reason ORDER BY n.uuid, n.reason),
         array_agg(n.reports ORDER BY n.uuid, n.reason)
    INTO uuids, reasons, counts
    FROM (SELECT w.uuid, wait_reason(w.code) AS reason, count(*) AS reports
            FROM reports r,
                 unnest(wait_uuids(r.waits), string_to_array(r.wait_reasons, NULL))
                   AS w(uuid, code)
           WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_report
           GROUP BY 1, 2) AS n;
  IF uuids IS NULL THEN
    RETURN;
  END IF;
  UPDATE reports SET waits = NULL, wait_reasons = NULL
   WHERE app_id = p_app AND received_day = p_day AND id = p_report;
  -- The counters are locked first, in key order as ingest upserts them,
  -- so the statement below reads them as they are now and nobody changes
  -- them under it: deciding "delete or count down" on an older version
  -- (a statement's snapshot, while another report's wait was counted in)
  -- did neither, and left the counter one too high (two servers moving
  -- reports of one image at once, tests/integration/test_arrivals.py).
  PERFORM 1 FROM image_waits c, unnest(uuids, reasons) AS n(uuid, reason)
    WHERE c.app_id = p_app AND c.uuid = n.uuid AND c.day = p_day AND c.reason = n.reason
    ORDER BY c.uuid, c.reason
    FOR UPDATE OF c;
  -- A counter its last report leaves is deleted, the others count down,
  -- so each counter is either deleted or updated.
  WITH n AS (
    SELECT * FROM unnest(uuids, reasons, counts) AS n(uuid, reason, reports)
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
