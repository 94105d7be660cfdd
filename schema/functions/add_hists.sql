-- add_hists — two duration histograms added bucket by bucket (schema/021).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- How ingest_reports' upserts and reprocessing's moves merge a row's
-- histogram with a batch's or a report's (a negative one takes it out).
-- Its name sorts before the LANGUAGE sql functions that call it
-- (count_into_group), which are checked when created.

CREATE OR REPLACE FUNCTION add_hists(p_a bigint[], p_b bigint[])
RETURNS bigint[] LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT array_agg(a + b ORDER BY i) FROM unnest(p_a, p_b) WITH ORDINALITY AS u(a, b, i);
$$;
COMMENT ON FUNCTION add_hists(bigint[], bigint[]) IS
  'Element-wise sum of two duration histograms (bigint[8], schema/021).';
