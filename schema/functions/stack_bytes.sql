-- stack_bytes — a report's stack hashes as the bytes reports keeps
-- (schema/036).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The hashes laid end to end, 16 bytes each, in their order; stack_at
-- reads one back. A single SQL expression, so PostgreSQL inlines it into
-- ingest_reports and update_report_symbols; STABLE, as array_to_string is
-- (a uuid's text is its output function's): PostgreSQL does not inline an
-- IMMUTABLE function whose body is less than that.

CREATE OR REPLACE FUNCTION stack_bytes(p_hashes uuid[])
RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT decode(translate(array_to_string(p_hashes, ''), '-', ''), 'hex');
$$;
COMMENT ON FUNCTION stack_bytes(uuid[]) IS
  'Stack hashes P_HASHES as reports.raw_stacks and symbolized_stacks keep them: 16 bytes each, end to end, in order (NULL for NULL).';
