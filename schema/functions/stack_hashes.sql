-- stack_hashes — a report's stack bytes as the array of their hashes
-- (schema/036).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- For the few places that take every hash of one report at once
-- (reprocessing's update_report_symbols); a scan over many reports reads
-- them with stack_at instead, which PostgreSQL inlines.

CREATE OR REPLACE FUNCTION stack_hashes(p_stacks bytea)
RETURNS uuid[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(stack_at(p_stacks, n) ORDER BY n), '{}')
    FROM generate_series(1, length(p_stacks) / 16) AS n;
$$;
COMMENT ON FUNCTION stack_hashes(bytea) IS
  'Every stack hash of P_STACKS (reports.raw_stacks or symbolized_stacks), in order.';
