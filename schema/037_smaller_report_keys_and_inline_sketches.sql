-- 037_smaller_report_keys_and_inline_sketches.sql — the group index of the
-- reports holds 4-byte hashes of the keys, report_keys loses its id index,
-- and the user sketches stay in their rows.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report; docs/PERFORMANCE.md "Keys hashed,
-- sketches inline"):
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
--  * The HyperLogLog sketches were stored like any large value: in a row
--    over about 2 KB (a popular group's full sketch is 2.5 KB) out of line
--    in TOAST, a new copy at every change. The old copies wait for vacuum,
--    so the four aggregate tables' TOAST was 82% dead space (113 MB at
--    1,000,000 reports for 20 MB live). With toast_tuple_target at its
--    largest a row stays whole unless it could not fit a page, and the old
--    version of a row is pruned from its page by a later update, vacuum or
--    not. (STORAGE MAIN on the sketch columns alone is not enough: a row
--    past 2 KB then has its small columns moved out of line instead.)
--    Values already out of line move in at their row's next write.

CREATE FUNCTION group_key_hash(key text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT hashtext(key) $$;
COMMENT ON FUNCTION group_key_hash(text) IS
  'A 4-byte hash of a group key, what reports_group_idx holds instead of the key; a reader compares it and the key itself (two keys may share a hash).';

CREATE INDEX reports_key_hash_order_idx ON reports
  (group_key_hash(key1), group_key_hash(key2), received_at DESC, id DESC);
DROP INDEX reports_group_idx;
ALTER INDEX reports_key_hash_order_idx RENAME TO reports_group_idx;
COMMENT ON INDEX reports_group_idx IS
  'Lists a group''s reports newest first with keyset pagination, in the partitions of the app (and days) the reader names: by group_key_hash of key1 (and key2), each row''s keys compared too.';

DROP INDEX report_keys_id_idx;
COMMENT ON INDEX reports_id_idx IS
  'Reads one report by id among the partitions of its app (and day, when the reader has it).';

ALTER TABLE groups SET (toast_tuple_target = 8160);
ALTER TABLE group_days SET (toast_tuple_target = 8160);
ALTER TABLE group_dim_days SET (toast_tuple_target = 8160);
ALTER TABLE group_facet_days SET (toast_tuple_target = 8160);

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
