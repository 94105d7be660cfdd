-- wait_uuids — the UUIDs of reports.waits (16 bytes each, end to end,
-- schema/038) as an array, in order; NULL for NULL.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- reports_waits_idx is on this very expression (038 could not call a
-- function file): PostgreSQL inlines the function into a reader's
-- condition, which then matches the index. So the body stays exactly the
-- index's expression, or the index is made again with it. string_to_array
-- is not strict, so a reader also says "waits IS NOT NULL", the index's
-- predicate.

CREATE OR REPLACE FUNCTION wait_uuids(p_waits bytea)
RETURNS uuid[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT string_to_array(rtrim(regexp_replace(encode(p_waits, 'hex'), '(.{32})', '\1,', 'g'),
                               ','), ',')::uuid[];
$$;
COMMENT ON FUNCTION wait_uuids(bytea) IS
  'The UUIDs of P_WAITS (reports.waits: 16 bytes each, end to end) as an array, in order; NULL for NULL. Inlined, it is the expression reports_waits_idx holds.';
