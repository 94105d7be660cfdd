-- 030_waits_on_reports.sql — the images a report waits for move from
-- report_waits rows onto the report's own row, found through a GIN index.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report): a wait was a row of its own (app, UUID,
-- report, day, reason) with two btree entries, about 170 bytes, and every
-- report waits for at least one system image whose symbols nobody uploaded
-- (a real stall touches several: UIKitCore, CoreFoundation, libdispatch…).
-- At 1,000,000 reports report_waits took 313 bytes per report, its primary
-- key half-empty because every report's row went into the middle of it (at
-- the end of its UUID's range). On the report's row a wait costs its UUID
-- (16 bytes) and one letter of reason, and the partial GIN index keeps one
-- compressed list of row addresses per UUID, a byte or two per report.
-- Retention drops the waits with the day partition; the reprocessor reads
-- the reports of one app, day and UUID at a time (store/arrivals.c).

ALTER TABLE reports ADD COLUMN waits uuid[], ADD COLUMN wait_reasons text;
ALTER TABLE reports ADD CONSTRAINT reports_waits_check CHECK (
  (waits IS NULL AND wait_reasons IS NULL)
  OR (cardinality(waits) > 0 AND wait_reasons ~ '^[mxtMX]+$'
      AND length(wait_reasons) = cardinality(waits)));
COMMENT ON COLUMN reports.waits IS
  'The images (UUIDs) the report waits for a better debug file of, in UUID order; NULL when none. An arrival of one of them (debug_file_arrivals) makes the reprocessor symbolize the report again; image_waits counts them for dsyms/missing.';
COMMENT ON COLUMN reports.wait_reasons IS
  'One letter per element of waits, in the same order (wait_reason_code): m missing, x malformed, t symbol_table (only a symbol table so far), M system_missing, X system_malformed. Only the app''s own reasons (lowercase) make a report pending.';

UPDATE reports r SET waits = w.uuids, wait_reasons = w.codes
  FROM (SELECT app_id, received_day, report, array_agg(uuid ORDER BY uuid) AS uuids,
               string_agg(CASE reason WHEN 'missing' THEN 'm' WHEN 'malformed' THEN 'x'
                                      WHEN 'symbol_table' THEN 't'
                                      WHEN 'system_missing' THEN 'M'
                                      WHEN 'system_malformed' THEN 'X' END,
                          '' ORDER BY uuid) AS codes
          FROM report_waits GROUP BY 1, 2, 3) w
 WHERE r.app_id = w.app_id AND r.received_day = w.received_day AND r.id = w.report;
DROP TABLE report_waits;

CREATE INDEX reports_waits_idx ON reports USING gin (waits) WHERE waits IS NOT NULL;
COMMENT ON INDEX reports_waits_idx IS
  'The reports of one app and day waiting for an arrived UUID (a bitmap scan of the day partition).';
DO $$
DECLARE
  idx record;
BEGIN
  FOR idx IN
    SELECT c.relname, p.relname AS parent
      FROM pg_class c
      JOIN pg_inherits h ON h.inhrelid = c.oid
      JOIN pg_class p ON p.oid = h.inhparent
     WHERE c.relkind IN ('i', 'I') AND obj_description(c.oid, 'pg_class') IS NULL
       AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'reports'::regclass)
  LOOP
    EXECUTE format('COMMENT ON INDEX %I IS %L', idx.relname,
                   format('Partition of %s.', idx.parent));
  END LOOP;
END $$;

-- Its report is now found by app, day and id; only the function files made
-- the old one (IF EXISTS: a fresh database has none yet).
DROP FUNCTION IF EXISTS clear_report_waits(bigint);
