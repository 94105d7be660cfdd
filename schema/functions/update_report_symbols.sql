-- update_report_symbols — reprocessing: a report's new symbolized form.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The caller holds the report's key row (st_report_lock) and has moved its
-- groups (move_report): the stacks' counts come last, as at ingest. The
-- new stacks are counted before the old ones are released, in the same
-- upsert, so a stack both keep is never deleted on the way.

CREATE OR REPLACE FUNCTION update_report_symbols(p_app bigint, p_day date, p_id bigint,
                                                 p_key1 text, p_key2 text, p_pending boolean,
                                                 p_symbolized text, p_stacks uuid[],
                                                 p_hashes uuid[], p_bodies text[])
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  old uuid[];
BEGIN
  SELECT r.symbolized_stacks INTO old FROM reports r
   WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  UPDATE reports r SET key1 = p_key1, key2 = p_key2, pending = p_pending,
                       symbolized = p_symbolized, symbolized_stacks = p_stacks
   WHERE r.app_id = p_app AND r.received_day = p_day AND r.id = p_id;
  PERFORM count_stacks(p_app, p_stacks || old,
                       array_fill(1::bigint, ARRAY[cardinality(p_stacks)])
                         || array_fill(-1::bigint, ARRAY[cardinality(old)]),
                       p_hashes, p_bodies);
END $$;
COMMENT ON FUNCTION update_report_symbols(bigint, date, bigint, text, text, boolean, text, uuid[],
                                          uuid[], text[]) IS
  'Reprocessing: replaces report p_id''s keys, pending flag and symbolized form (skeleton and stack hashes, the texts of new stacks in p_hashes/p_bodies), counting the new stacks in and the replaced ones out.';
