-- add_report_waits — the images one report waits for (reports.waits) and
-- their counts, versions and last time for dsyms/missing (image_waits).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A set-returning SQL function is planned again at every call; plpgsql
-- keeps its plan for the session. The reprocessor calls it after
-- clear_report_waits, in the transaction that moves the report; the
-- image locks and late arrivals are ingest_reports' (see there).

CREATE OR REPLACE FUNCTION add_report_waits(p_app bigint, p_report bigint, p_day date,
                                            p_waits jsonb)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF jsonb_array_length(p_waits) = 0 THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(h)
     FROM (SELECT DISTINCT hashtextextended('image/' || w.uuid::text, 7) AS h
             FROM jsonb_to_recordset(p_waits) AS w(uuid uuid, reason text)
            WHERE w.reason IN ('missing', 'system_missing') ORDER BY 1) images;
  -- A UUID the report waits for already keeps its reason and its count.
  WITH listed AS (
    SELECT DISTINCT ON (w.uuid) w.uuid, w.image_name, w.arch, w.reason
      FROM jsonb_to_recordset(p_waits) AS w(uuid uuid, image_name text, arch text,
                                           reason text)
     ORDER BY w.uuid
  ), report AS (
    SELECT coalesce(wait_uuids(r.waits), '{}') AS waits, coalesce(r.wait_reasons, '') AS reasons,
           coalesce(r.app_version, '') AS version, r.received_at AS at
      FROM reports r
     WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_report
  ), added AS (
    SELECT l.* FROM listed l, report r WHERE NOT l.uuid = ANY (r.waits)
  ), merged AS (
    SELECT array_agg(uuid ORDER BY uuid) AS waits, string_agg(code, '' ORDER BY uuid) AS reasons
      FROM (SELECT w.uuid, w.code
              FROM report r, unnest(r.waits, string_to_array(r.reasons, NULL)) AS w(uuid, code)
            UNION ALL
            SELECT uuid, wait_reason_code(reason) FROM added) AS all_waits
  ), stored AS (
    UPDATE reports r SET waits = stack_bytes(m.waits), wait_reasons = m.reasons FROM merged m
     WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_report
       AND EXISTS (SELECT 1 FROM added)
  ), counted AS (
    INSERT INTO image_waits AS c (app_id, uuid, day, reason, image_name, arch, reports,
                                  app_versions, last_seen)
    SELECT p_app, a.uuid, p_day, a.reason, a.image_name, a.arch, 1, ARRAY[r.version], r.at
      FROM added a, report r
     ORDER BY a.uuid, a.reason
    ON CONFLICT (app_id, uuid, day, reason) DO UPDATE SET
      reports = c.reports + 1,
      image_name = image_name_kept(c.image_name, excluded.image_name),
      arch = greatest(c.arch, excluded.arch),
      app_versions = app_versions_kept(c.app_versions, excluded.app_versions),
      last_seen = greatest(c.last_seen, excluded.last_seen)
  )
  INSERT INTO debug_file_arrivals (app_id, uuid)
  SELECT p_app, l.uuid FROM listed l
   WHERE l.reason IN ('missing', 'system_missing')
     AND (EXISTS (SELECT 1 FROM debug_files d WHERE d.app_id = p_app AND d.uuid = l.uuid)
          OR EXISTS (SELECT 1 FROM system_symbols s WHERE s.uuid = l.uuid));
END $$;
COMMENT ON FUNCTION add_report_waits(bigint, bigint, date, jsonb) IS
  'Adds the images report p_report (app p_app, received on p_day) waits for to reports.waits from a JSON array, counts them in image_waits, and records an arrival for a missing image whose file committed meanwhile.';
