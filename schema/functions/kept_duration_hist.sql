-- kept_duration_hist — a dimension or facet row's duration histogram,
-- whether the row keeps one or not (schema/034).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A row of group_dim_days or group_facet_days that counts at most one
-- duration keeps no histogram (NULL): it is the bucket of that duration,
-- the row's max_duration_ms, which the row holds anyway (none when it is
-- NULL). A move taking a report out of a row starts from here; adding
-- two rows' goes through kept_duration_hists_sum (the fold, a move's new
-- row), reading single buckets through kept_duration_bucket. Written as
-- one SQL expression on its arguments so PostgreSQL inlines it
-- (add_hists' reason).

CREATE OR REPLACE FUNCTION kept_duration_hist(p_hist anycompatiblearray, p_max bigint)
RETURNS anycompatiblearray LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_hist, ARRAY[
    kept_duration_bucket(p_hist, p_max, 1), kept_duration_bucket(p_hist, p_max, 2),
    kept_duration_bucket(p_hist, p_max, 3), kept_duration_bucket(p_hist, p_max, 4),
    kept_duration_bucket(p_hist, p_max, 5), kept_duration_bucket(p_hist, p_max, 6),
    kept_duration_bucket(p_hist, p_max, 7), kept_duration_bucket(p_hist, p_max, 8)]);
$$;
COMMENT ON FUNCTION kept_duration_hist(anycompatiblearray, bigint) IS
  'The duration histogram of a group_dim_days or group_facet_days row: P_HIST, or when the row keeps none (it counts at most one duration) the bucket of P_MAX, its longest (all zeros when NULL).';
