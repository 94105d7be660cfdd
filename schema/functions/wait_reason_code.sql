-- wait_reason_code — a wait's reason as the one letter kept in
-- reports.wait_reasons (schema/030); wait_reason is its inverse.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Lowercase for the app's own images, uppercase for system images, so the
-- letters read as the reasons do.
--
-- Not STRICT (NULL gives NULL all the same): PostgreSQL never inlines a
-- STRICT function whose body is a CASE, and ingest calls this once per
-- wait of every report.

CREATE OR REPLACE FUNCTION wait_reason_code(p_reason text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE p_reason WHEN 'missing' THEN 'm' WHEN 'malformed' THEN 'x'
                       WHEN 'symbol_table' THEN 't' WHEN 'system_missing' THEN 'M'
                       WHEN 'system_malformed' THEN 'X' END
$$;
COMMENT ON FUNCTION wait_reason_code(text) IS
  'The letter reports.wait_reasons keeps for a wait''s reason (missing m, malformed x, symbol_table t, system_missing M, system_malformed X); NULL for any other text.';
