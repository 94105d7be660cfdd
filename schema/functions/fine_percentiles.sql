-- fine_percentiles — p50, p90 and p99 of a group's durations from
-- its fine histograms (SPEC §10.1, schema/044).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- P_BUCKETS and P_COUNTS are (bucket, count) pairs of any number of rows
-- (fine_pairs), summed here per bucket and walked once, in PL/pgSQL: a
-- SQL body computing each rank in a subquery over a window cost 1.5 ms a
-- call, most of a 50-group list's time at 1,000,000 reports. The p-th percentile is the
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
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  total bigint;
  running bigint := 0;
  wanted numeric[] := ARRAY[0.50, 0.90, 0.99];
  names text[] := ARRAY['p50_ms', 'p90_ms', 'p99_ms'];
  answers bigint[] := ARRAY[NULL, NULL, NULL]::bigint[];
  rank_i integer := 1;
  max_bucket integer := fine_bucket(p_max);
  pair record;
BEGIN
  SELECT sum(n) INTO total FROM unnest(p_counts) AS n;
  -- One walk up the summed buckets finds the three ranks in turn.
  FOR pair IN SELECT u.bucket, sum(u.n) AS n FROM unnest(p_buckets, p_counts) AS u(bucket, n)
               GROUP BY u.bucket HAVING sum(u.n) > 0 ORDER BY u.bucket LOOP
    running := running + pair.n;
    WHILE rank_i <= 3 AND running >= ceil(wanted[rank_i] * total) LOOP
      answers[rank_i] := CASE WHEN pair.bucket < 0 THEN 0
                          WHEN pair.bucket = max_bucket THEN p_max
                          ELSE round(2 * power(1.04::float8, pair.bucket) / 2.04)::bigint END;
      rank_i := rank_i + 1;
    END LOOP;
    EXIT WHEN rank_i > 3;
  END LOOP;
  RETURN jsonb_build_object(names[1], answers[1], names[2], answers[2], names[3], answers[3]);
END $$;
COMMENT ON FUNCTION fine_percentiles(integer[], bigint[], bigint) IS
  'The group reply''s {"p50_ms","p90_ms","p99_ms"} (null each when no duration) from fine histogram pairs P_BUCKETS/P_COUNTS of any number of rows and the longest duration P_MAX: the nearest-rank percentile''s bucket middle (within 2% plus 0.5 ms), or P_MAX in P_MAX''s bucket (within 4%).';
