-- kept_duration_hist — a dimension or facet row's duration histogram,
-- whether the row keeps one or not (schema/034).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A row of group_dim_days or group_facet_days that counts at most one
-- duration keeps no histogram (NULL): it is the bucket of that duration,
-- the row's max_duration_ms, which the row holds anyway (none when it is
-- NULL). Everything that adds to a row or reads its buckets goes through
-- here. Written as one SQL expression on its arguments so PostgreSQL
-- inlines it (add_hists' reason): the fold and the lists call it once per
-- row. Buckets as count_durations makes them (duration_bucket_edges;
-- width_bucket gives 0 for a negative duration, which count_durations
-- leaves out too).

CREATE OR REPLACE FUNCTION kept_duration_hist(p_hist anycompatiblearray, p_max bigint)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(p_hist, ARRAY[
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 1)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 2)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 3)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 4)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 5)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 6)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 7)::int, 0),
    coalesce((width_bucket(p_max, duration_bucket_edges()) = 8)::int, 0)]);
$$;
COMMENT ON FUNCTION kept_duration_hist(anycompatiblearray, bigint) IS
  'The duration histogram of a group_dim_days or group_facet_days row: P_HIST, or when the row keeps none (it counts at most one duration) the bucket of P_MAX, its longest (all zeros when NULL).';
