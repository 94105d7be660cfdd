-- ms_add — two stacks' per-frame durations added (schema/051).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- How the fold and reprocessing add a batch's or a report's durations to a
-- group_stack_days row (negative ones take a report out). NULL is no
-- durations (an iOS stack, a row counted before schema/051); a NULL
-- element a frame without one.
CREATE OR REPLACE FUNCTION ms_add(p_a bigint[], p_b bigint[])
RETURNS bigint[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_a IS NULL THEN p_b
              WHEN p_b IS NULL THEN p_a
              ELSE ARRAY(SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE a + b END
                           FROM unnest(p_a, p_b) WITH ORDINALITY AS u(a, b, i) ORDER BY i) END
$$;
COMMENT ON FUNCTION ms_add(bigint[], bigint[]) IS
  'Element-wise sum of two per-frame duration arrays (schema/051); a NULL array or element counts as none, the shorter array is padded with none.';
