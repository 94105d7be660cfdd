-- fine_hist_of — the fine duration histogram of some durations
-- (schema/044; fine_hist_add says what one is).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).

CREATE OR REPLACE FUNCTION fine_hist_of(p_durations bigint[], p_weight integer)
RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(w.v ORDER BY s.bucket, w.k), '{}')
    FROM (SELECT fine_bucket(ms) AS bucket, count(*)::integer * p_weight AS n
            FROM unnest(p_durations) AS ms WHERE ms >= 0 GROUP BY 1) s,
         LATERAL (VALUES (0, s.bucket), (1, s.n)) AS w(k, v);
$$;
COMMENT ON FUNCTION fine_hist_of(bigint[], integer) IS
  'The fine duration histogram of P_DURATIONS (NULLs left out), each count times P_WEIGHT (-1 to take them out of a row); ''{}'' when none.';
