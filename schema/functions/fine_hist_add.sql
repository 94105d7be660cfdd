-- fine_hist_add — the sum of two fine duration histograms (schema/044).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A fine histogram is an integer[] of (bucket, count) pairs by bucket,
-- {k1, n1, k2, n2, …}: sparse, since one row's durations fill a few of
-- the ~130 buckets a group's can span, and most rows count one or two.
-- A negative count subtracts (a report moved out); fine_hist_from makes
-- the sum.

CREATE OR REPLACE FUNCTION fine_hist_add(p_a integer[], p_b integer[])
RETURNS integer[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT fine_hist_from(array_agg(p.bucket), array_agg(p.n))
            FROM (SELECT * FROM fine_pairs(p_a) UNION ALL SELECT * FROM fine_pairs(p_b)) AS p);
END $$;
COMMENT ON FUNCTION fine_hist_add(integer[], integer[]) IS
  'The sum of fine duration histograms P_A and P_B ((bucket, count) pairs by bucket; NULL as empty), buckets summing to 0 left out; ''{}'' when nothing is left.';
