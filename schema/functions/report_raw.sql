-- report_raw — a stored report as the native v1 text the server wrote
-- (docs/STORAGE.md "Reports"): what reprocessing parses again and the
-- trace route reads.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A row stored now keeps only the report's stacks in `raw`
-- ({"images":…,"threads":…[,"samples":…]}, ing_report_to_native's
-- ING_NATIVE_STACKS): its identity and metadata are the row's columns, and
-- are written back in front here, in the order and with the omissions of
-- ING_NATIVE_WHOLE. Rows stored before 2026-11-26 keep the whole text and are
-- returned as they are. plpgsql, not SQL: a SQL body is checked against
-- unstack() when created, and function files are applied in name order.

CREATE OR REPLACE FUNCTION report_raw(r reports)
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  body text := unstack(r.app_id, r.raw, r.raw_stacks);
BEGIN
  IF NOT starts_with(body, '{"images":') THEN
    RETURN body;
  END IF;
  RETURN '{' || concat_ws(',',
           '"report_id":' || to_json(r.report_id),
           '"kind":' || to_json(r.kind),
           '"app_version":' || to_json(r.app_version),
           '"build":' || to_json(r.build),
           '"os":' || to_json(r.os),
           '"os_version":' || to_json(r.os_version),
           '"os_build":' || to_json(r.os_build),
           '"device":' || to_json(r.device),
           '"user_id":' || to_json(r.user_id),
           '"duration_ms":' || r.duration_ms,
           substr(body, 2));
END $$;
COMMENT ON FUNCTION report_raw(reports) IS
  'Report r''s native v1 text: its stacks (raw, unstacked) behind its identity and metadata columns, or raw unstacked as it is for rows that keep the whole text.';
