-- 033_report_indexes_without_partition_keys.sql — the reports' indexes
-- keep only what differs from row to row of a day partition.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: `reports` is partitioned by app and then by UTC day, so in each
-- partition app_id and received_day are the same in every row, yet both
-- indexes carried them in every entry.
--  * The primary key (app_id, received_day, id) had to name them: a
--    partitioned table's unique index must hold its partition keys. An
--    entry was 20 bytes of key for what the 8-byte id alone finds, 40
--    bytes a report at 1,000,000 reports. A report's id is unique across
--    every app and day already (report_keys_id_idx, which hands them out
--    to readers), so a plain index on id finds a row in the partition the
--    reader names (report_keys gives app and day), as the key did.
--  * The group index (app_id, key1, key2, received_at DESC, id DESC): its
--    entries are in random key order, so its pages are about 60% full and
--    the 8 bytes of app_id cost about 13 bytes a report.
-- Every reader names app_id (and received_day where it has it), which
-- picks the partitions before either index is read. The indexes are made
-- on the parent, so PostgreSQL makes them on every partition, and on each
-- partition made from now on.

CREATE INDEX reports_id_idx ON reports (id);
COMMENT ON INDEX reports_id_idx IS
  'Reads one report by id in the partition of its app and day (report_keys locates it; report_keys_id_idx keeps ids unique).';
ALTER TABLE reports DROP CONSTRAINT reports_pkey;

CREATE INDEX reports_key_order_idx ON reports (key1, key2, received_at DESC, id DESC);
DROP INDEX reports_group_idx;
ALTER INDEX reports_key_order_idx RENAME TO reports_group_idx;
COMMENT ON INDEX reports_group_idx IS
  'Lists a group''s reports newest first with keyset pagination, in the partitions of the app (and days) the reader names.';

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
