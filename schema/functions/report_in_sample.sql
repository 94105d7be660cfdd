-- report_in_sample — reprocessing: whether the report being moved was in
-- the sample (reports.in_sample, schema/023).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- move_report knows a report by its user, time and old keys (it runs
-- before st_report_update_symbols): any report of p_user at p_at there
-- stands for it, as in move_day_row. No such report is a caller's bug.

CREATE OR REPLACE FUNCTION report_in_sample(p_app bigint, p_day date, p_key1 text,
                                            p_key2 text, p_user text, p_at timestamptz)
RETURNS boolean LANGUAGE plpgsql STABLE AS $$
DECLARE
  found_in_sample boolean;
BEGIN
  found_in_sample := (SELECT bool_or(r.in_sample) FROM reports r
                       WHERE r.app_id = p_app AND r.received_day = p_day
                         AND group_key_hash(r.key1) = group_key_hash(p_key1)
                         AND r.key1 = p_key1
                         AND (p_key2 IS NULL OR r.key2 = p_key2)
                         AND r.user_id = p_user AND r.received_at = p_at);
  IF found_in_sample IS NULL THEN
    RAISE EXCEPTION 'report_in_sample: no report of % at % in group %', p_user, p_at,
      coalesce(p_key2, p_key1);
  END IF;
  RETURN found_in_sample;
END $$;
COMMENT ON FUNCTION report_in_sample(bigint, date, text, text, text, timestamptz) IS
  'Reprocessing: the in_sample of the report of p_user at p_at in group p_key1 (and level-2 group p_key2 when given) on p_day, which move_day_row and move_facet_days move.';
