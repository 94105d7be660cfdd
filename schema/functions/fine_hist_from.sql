-- fine_hist_from — a fine duration histogram from (bucket, count) pairs
-- in any order and repeated (schema/044; fine_hist_add says the format).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The one place pairs become a histogram: fine_hist_add, fine_hist_of and
-- count_out_of_group give it theirs. A bucket whose counts sum to 0 is
-- left out, and the histogram of nothing is '{}', never NULL (NULL is a
-- row that keeps no histogram: kept_fine_hist). PL/pgSQL: its query is
-- planned once a session, where a SQL body with a FROM is run by the SQL
-- function executor at every call (the fold calls it per row).

CREATE OR REPLACE FUNCTION fine_hist_from(p_buckets integer[], p_counts bigint[])
RETURNS integer[] LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN (SELECT coalesce(array_agg(w.v ORDER BY s.bucket, w.k), '{}')
            FROM (SELECT u.bucket, sum(u.n) AS n FROM unnest(p_buckets, p_counts) AS u(bucket, n)
                   WHERE u.bucket IS NOT NULL GROUP BY 1 HAVING sum(u.n) <> 0) s,
                 LATERAL (VALUES (0, s.bucket), (1, s.n::integer)) AS w(k, v));
END $$;
COMMENT ON FUNCTION fine_hist_from(integer[], bigint[]) IS
  'The fine duration histogram of the (bucket, count) pairs P_BUCKETS[i], P_COUNTS[i] (any order, repeats summed, buckets summing to 0 left out); ''{}'' when nothing is left.';
