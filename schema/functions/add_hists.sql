-- add_hists — two duration histograms added bucket by bucket (schema/021).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- How ingest_reports' upserts and reprocessing's moves merge a row's
-- histogram with a batch's or a report's (a negative one takes it out).

-- Written as one expression, not over unnest: PostgreSQL then inlines it
-- into the calling statement; called through the SQL function executor,
-- each call cost about 14 µs, a dozen times per ingest batch (not STRICT
-- for the same reason: no caller passes NULL, every histogram column is
-- NOT NULL). Polymorphic so that two integer[] histograms (group_dim_days,
-- group_facet_days: schema/031) add as integer[] and two bigint[] ones as
-- bigint[]: an argument cast to another array type, referenced eight
-- times, is not inlined (schema/032).
CREATE OR REPLACE FUNCTION add_hists(p_a anycompatiblearray, p_b anycompatiblearray)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE AS $$
  SELECT ARRAY[p_a[1] + p_b[1], p_a[2] + p_b[2], p_a[3] + p_b[3], p_a[4] + p_b[4],
               p_a[5] + p_b[5], p_a[6] + p_b[6], p_a[7] + p_b[7], p_a[8] + p_b[8]];
$$;
COMMENT ON FUNCTION add_hists(anycompatiblearray, anycompatiblearray) IS
  'Element-wise sum of two duration histograms (8 counts, schema/021), in their common array type.';
