-- fine_percentiles — p50, p90 and p99 of a group's durations from
-- its fine histograms (SPEC §10.1, schema/044).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- P_BUCKETS and P_COUNTS are (bucket, count) pairs of any number of rows
-- (fine_pairs), summed here per bucket. The p-th percentile is the
-- nearest rank: the smallest duration with at least ceil(p × N) of the N
-- durations at or below it. It lies in the bucket where the running
-- count reaches that rank, (1.04^(k-1), 1.04^k]; the answer is that
-- range's middle in ratio, 2 × 1.04^k ÷ 2.04, within 2% of anything in
-- it, rounded to a whole ms (within 0.5 ms: exact below 25 ms, where a
-- bucket holds at most one whole number). In the bucket of P_MAX, the
-- longest duration, the answer is P_MAX itself, within 4% of anything
-- there (the bucket's width): so one duration, or a p99 that is the
-- longest, is answered exactly.

CREATE OR REPLACE FUNCTION fine_percentiles(p_buckets integer[], p_counts bigint[],
                                                p_max bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  WITH h AS (
    SELECT bucket, sum(sum(n)) OVER (ORDER BY bucket) AS running, sum(sum(n)) OVER () AS total
      FROM unnest(p_buckets, p_counts) AS u(bucket, n)
     GROUP BY bucket HAVING sum(n) > 0
  ), ranks AS (
    SELECT q.name, (SELECT min(h.bucket) FROM h WHERE h.running >= ceil(q.p * h.total)) AS bucket
      FROM (VALUES ('p50_ms', 0.50), ('p90_ms', 0.90), ('p99_ms', 0.99)) AS q(name, p)
  )
  SELECT jsonb_object_agg(name, CASE WHEN bucket < 0 THEN 0
                                     WHEN bucket = fine_bucket(p_max) THEN p_max
                                     WHEN bucket IS NOT NULL
                                     THEN round(2 * 1.04 ^ bucket / 2.04)::bigint END)
    FROM ranks;
$$;
COMMENT ON FUNCTION fine_percentiles(integer[], bigint[], bigint) IS
  'The group reply''s {"p50_ms","p90_ms","p99_ms"} (null each when no duration) from fine histogram pairs P_BUCKETS/P_COUNTS of any number of rows and the longest duration P_MAX: the nearest-rank percentile''s bucket middle (within 2% plus 0.5 ms), or P_MAX in P_MAX''s bucket (within 4%).';
