-- 037_hashed_group_index.sql — the group index of the reports holds
-- 4-byte hashes of the keys, and report_keys loses its id index.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report; docs/STORAGE.md "The reports'
-- indexes"):
--  * reports_group_idx (key1, key2, received_at DESC, id DESC) took 122
--    bytes a report at 1,000,000 reports: two 17-byte texts per entry, and
--    pages about 55% full since every group inserts in the middle of it.
--    Its readers always name key1 (and most key2), and read the rows
--    anyway: an index on 4-byte hashes of the keys finds the same entries,
--    and the rows' own keys, compared beside the hash, drop the rare other
--    group whose key hashes alike. Every reader writes both comparisons.
--  * report_keys_id_idx (21 bytes a report) located a report of a known
--    app by id and let the reprocessor lock it. Each day partition's id
--    index (033) finds it among the app's partitions, and the reprocessor
--    now locks the report's row itself, the row it updates. Ids come from
--    one sequence; nothing else needed them unique.

-- hashtext, as the function file group_key_hash writes it: its readers
-- ask through group_key_hash, which PostgreSQL inlines into this.
CREATE INDEX reports_key_hash_order_idx ON reports
  (hashtext(key1), hashtext(key2), received_at DESC, id DESC);
DROP INDEX reports_group_idx;
ALTER INDEX reports_key_hash_order_idx RENAME TO reports_group_idx;
COMMENT ON INDEX reports_group_idx IS
  'Lists a group''s reports newest first with keyset pagination, in the partitions of the app (and days) the reader names: by group_key_hash (hashtext) of key1 (and key2), each row''s keys compared too.';

DROP INDEX report_keys_id_idx;
COMMENT ON INDEX reports_id_idx IS
  'Reads one report by id among the partitions of its app (and day, when the reader has it).';


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
