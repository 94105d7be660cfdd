-- wait_reason — the reason one letter of reports.wait_reasons stands for
-- (schema/030); wait_reason_code is its inverse.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Not STRICT, as wait_reason_code: so PostgreSQL inlines it.

CREATE OR REPLACE FUNCTION wait_reason(p_code text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_code WHEN 'm' THEN 'missing' WHEN 'x' THEN 'malformed'
                     WHEN 't' THEN 'symbol_table' WHEN 'M' THEN 'system_missing'
                     WHEN 'X' THEN 'system_malformed' END
$$;
COMMENT ON FUNCTION wait_reason(text) IS
  'The reason one letter of reports.wait_reasons stands for (wait_reason_code''s inverse).';
