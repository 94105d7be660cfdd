-- 012_report_documents_as_text.sql — a report's two documents stored as
-- text, no longer checked by PostgreSQL on the way in.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- 004 made them json: the text kept as sent, but parsed once more by
-- json_in on every insert to prove it is JSON. Nothing else in PostgreSQL
-- reads them as json (the report's page casts the stored text to jsonb
-- when it is read), and both come from the server's own JSON writer
-- (common/jsonw.c), which builds only valid JSON: the raw document is the
-- report as the server parsed and re-wrote it, not the bytes a device
-- sent. That check was about 12% of the one ingest backend's time
-- (perf, pgbench calling ingest_reports on stored batches) and is the
-- whole difference here; lz4 compression stays.
--
-- Changing a column's type rewrites the tables and leaves every partition
-- with the default compression (pglz), and SET COMPRESSION does not
-- recurse; a partition created later copies its own parent's. So lz4 is
-- set again on every table of the tree.

ALTER TABLE reports
  ALTER COLUMN raw TYPE text USING raw::text,
  ALTER COLUMN symbolized TYPE text USING symbolized::text;
DO $$
DECLARE
  part regclass;
BEGIN
  FOR part IN SELECT relid FROM pg_partition_tree('reports') LOOP
    EXECUTE format('ALTER TABLE %s ALTER COLUMN raw SET COMPRESSION lz4,'
                   ' ALTER COLUMN symbolized SET COMPRESSION lz4', part);
  END LOOP;
END $$;

-- 010's ingest_reports stores the two documents as they come: its two
-- casts go, nothing else changes (the function is otherwise 010's, read
-- there).
DO $$
DECLARE
  cast_to_json constant text := 'p_raw[o]::json, p_symbolized[o]::json';
  definition text := pg_get_functiondef('ingest_reports'::regproc);
BEGIN
  IF position(cast_to_json IN definition) = 0 THEN
    RAISE EXCEPTION '012: ingest_reports is not the function 010 made';
  END IF;
  EXECUTE replace(definition, cast_to_json, 'p_raw[o], p_symbolized[o]');
END $$;
