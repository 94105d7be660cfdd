-- fine_hist_add — the sum of two fine duration histograms (schema/044).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A fine histogram is an integer[] of (bucket, count) pairs by bucket,
-- {k1, n1, k2, n2, …}: sparse, since one row's durations fill a few of
-- the ~130 buckets a group's can span, and most rows count one or two.
-- A negative count subtracts (a report moved out); a bucket whose sum is
-- 0 is left out, and the sum of nothing is '{}', never NULL (NULL is a
-- row that keeps no histogram: kept_fine_hist).

CREATE OR REPLACE FUNCTION fine_hist_add(p_a integer[], p_b integer[])
RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(w.v ORDER BY s.bucket, w.k), '{}')
    FROM (SELECT x.all_pairs[i] AS bucket, sum(x.all_pairs[i + 1]) AS n
            FROM (SELECT coalesce(p_a, '{}') || coalesce(p_b, '{}') AS all_pairs) x,
                 generate_series(1, cardinality(x.all_pairs), 2) i
           GROUP BY 1 HAVING sum(x.all_pairs[i + 1]) <> 0) s,
         LATERAL (VALUES (0, s.bucket), (1, s.n::integer)) AS w(k, v);
$$;
COMMENT ON FUNCTION fine_hist_add(integer[], integer[]) IS
  'The sum of fine duration histograms P_A and P_B ((bucket, count) pairs by bucket; NULL as empty), buckets summing to 0 left out; ''{}'' when nothing is left.';
