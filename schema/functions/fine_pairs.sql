-- fine_pairs — a fine duration histogram as rows, for readers that sum
-- many rows' histograms (schema/044; fine_hist_add says what one is).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A single SELECT, so PostgreSQL inlines it into the caller's FROM: the
-- readers sum (bucket, count) rows with plain aggregates, where merging
-- the arrays row by row would copy them once per row.

CREATE OR REPLACE FUNCTION fine_pairs(p_fine integer[])
RETURNS TABLE (bucket integer, n bigint) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT p_fine[i], p_fine[i + 1]::bigint
    FROM generate_series(1, coalesce(cardinality(p_fine), 0), 2) AS i;
$$;
COMMENT ON FUNCTION fine_pairs(integer[]) IS
  'The (bucket, count) pairs of fine duration histogram P_FINE as rows (none for NULL).';
