-- kept_fine_hist — a row's fine duration histogram, whether it keeps one
-- or not (schema/044, as kept_duration_hist for the display buckets).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A group_dim_days or group_facet_days row of at most one duration keeps
-- no histogram (NULL, as schema/034 decided for duration_hist): its one
-- duration is its max_duration_ms. One expression, so PostgreSQL inlines
-- it.

CREATE OR REPLACE FUNCTION kept_fine_hist(p_fine integer[], p_max bigint)
RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_fine, CASE WHEN p_max >= 0 THEN ARRAY[fine_bucket(p_max), 1] END);
$$;
COMMENT ON FUNCTION kept_fine_hist(integer[], bigint) IS
  'The fine duration histogram of a row: P_FINE, or when it keeps none (at most one duration) the one bucket of P_MAX, its longest (NULL when that is NULL too).';
