-- stack_at — the N-th stack hash (from 1) of a report's stack bytes
-- (schema/036).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- NULL past the end, as a uuid[] subscript was. A single SQL expression,
-- so PostgreSQL inlines it where unstack and the call tree's scan read
-- a report's stacks.

CREATE OR REPLACE FUNCTION stack_at(p_stacks bytea, p_n integer)
RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT nullif(encode(substr(p_stacks, 16 * (p_n - 1) + 1, 16), 'hex'), '')::uuid;
$$;
COMMENT ON FUNCTION stack_at(bytea, integer) IS
  'The P_N-th (from 1) stack hash of P_STACKS (reports.raw_stacks or symbolized_stacks), NULL past the end.';
