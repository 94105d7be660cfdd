-- kept_duration_bucket — one bucket of a dimension or facet row's
-- duration histogram, whether the row keeps one or not (schema/034).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Bucket P_BUCKET (1 to 8) of P_HIST, or for a row that keeps no
-- histogram (it counts at most one duration, its max P_MAX) 1 when P_MAX
-- falls in that bucket, else 0. Readers sum it per bucket over many rows:
-- one subscript for a row that keeps a histogram, one width_bucket for
-- one that does not, where building the whole histogram per bucket read
-- would cost eight. Buckets as count_durations makes them
-- (duration_bucket_edges; width_bucket gives 0 for a negative duration,
-- which count_durations leaves out too). A single SQL expression, so
-- PostgreSQL inlines it.

CREATE OR REPLACE FUNCTION kept_duration_bucket(p_hist anycompatiblearray, p_max bigint,
                                                p_bucket integer)
RETURNS anycompatible LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_hist[p_bucket],
                  (width_bucket(p_max, duration_bucket_edges()) = p_bucket)::int, 0);
$$;
COMMENT ON FUNCTION kept_duration_bucket(anycompatiblearray, bigint, integer) IS
  'Bucket P_BUCKET (1 to 8) of a group_dim_days or group_facet_days row''s duration histogram: of P_HIST, or when the row keeps none (at most one duration) 1 if P_MAX, its longest, falls in it, else 0.';
