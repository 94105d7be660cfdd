-- 038_waits_as_bytes.sql — the images a report waits for kept as 16 bytes
-- each, end to end, as its stack hashes are (036).
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report): a uuid[] carries 24 bytes of array
-- header before its first element, and aligns on 4 bytes; nearly every
-- report waits for at least one system image, so that was 25 of the 41
-- bytes a report's waits took. The GIN index that finds the reports
-- waiting for an arrived UUID is now on the same UUIDs as an array, made
-- from the bytes with built-in functions only (an index made here cannot
-- call a function file): the function file wait_uuids is that expression,
-- and PostgreSQL inlines it into its readers' conditions, which then match
-- the index. The column's type changes in place, which rewrites every
-- partition.

DROP INDEX reports_waits_idx;
ALTER TABLE reports DROP CONSTRAINT reports_waits_check;
ALTER TABLE reports ALTER COLUMN waits TYPE bytea
  USING decode(translate(array_to_string(waits, ''), '-', ''), 'hex');
ALTER TABLE reports ADD CONSTRAINT reports_waits_check CHECK (
  (waits IS NULL AND wait_reasons IS NULL)
  OR (length(waits) > 0 AND length(waits) % 16 = 0 AND wait_reasons ~ '^[mxtMX]+$'
      AND length(wait_reasons) = length(waits) / 16));
COMMENT ON COLUMN reports.waits IS
  'The images (UUIDs, 16 bytes each, end to end; wait_uuids reads them) the report waits for a better debug file of, in UUID order; NULL when none. An arrival of one of them (debug_file_arrivals) makes the reprocessor symbolize the report again; image_waits counts them for dsyms/missing.';

CREATE INDEX reports_waits_idx ON reports USING gin
  ((string_to_array(rtrim(regexp_replace(encode(waits, 'hex'), '(.{32})', '\1,', 'g'), ','),
                    ',')::uuid[]))
  WHERE waits IS NOT NULL;
COMMENT ON INDEX reports_waits_idx IS
  'The reports of one app and day waiting for an arrived UUID (a bitmap scan of the day partition, asked as wait_uuids(waits) @> ARRAY[uuid] AND waits IS NOT NULL).';

-- The partitions' new indexes are the parent's, made by PostgreSQL: say
-- so, as ensure_report_partition does for the partitions it makes.
DO $$
DECLARE
  idx record;
BEGIN
  FOR idx IN
    SELECT c.relname, p.relname AS parent
      FROM pg_inherits h
      JOIN pg_class c ON c.oid = h.inhrelid
      JOIN pg_class p ON p.oid = h.inhparent
     WHERE c.relkind IN ('i', 'I')
       AND c.relnamespace = to_regnamespace(current_schema())
       AND obj_description(c.oid, 'pg_class') IS NULL
  LOOP
    EXECUTE format('COMMENT ON INDEX %I IS %L', idx.relname,
                   format('Partition of %s.', idx.parent));
  END LOOP;
END $$;
