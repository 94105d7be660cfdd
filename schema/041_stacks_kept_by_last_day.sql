-- 041_stacks_kept_by_last_day.sql — a stack is kept until the last day a
-- stored report referred to it is dropped, instead of by a reference
-- count (docs/STORAGE.md "Stacks").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, ingest rate; docs/PERFORMANCE.md "Stacks kept by their
-- last day"): every batch added its references to ~18 stack_refs rows,
-- the same popular stacks every time: each a row locked, rewritten and
-- logged, 0.17 ms of the 1.6 ms a batch costs the one ingest connection.
-- A stack's last day changes once a day at most, so nearly every batch
-- now only reads its stacks by key. Retention, which drops whole days,
-- deletes the stacks whose last day went with them, through the index
-- below, without reading the dropped days. What this gives up: a stack
-- reprocessing replaces stays until its day is dropped, as the report
-- did before it was reprocessed.
--
-- A report's hashes are 16 bytes each end to end (schema/036); stack_at
-- and stack_hashes are function files, which a numbered migration does
-- not call, so the conversion is written out. A stack no report refers
-- to (none, while the counts held) is deleted, as its count at 0 did.
-- count_stacks goes (IF EXISTS: a fresh database has no function file
-- applied yet).

ALTER TABLE stacks ADD COLUMN last_day date;
UPDATE stacks s SET last_day = r.day
  FROM (SELECT r.app_id,
               encode(substr(b.hashes, 16 * n + 1, 16), 'hex')::uuid AS hash,
               max(r.received_day) AS day
          FROM reports r,
               LATERAL (SELECT r.raw_stacks || r.symbolized_stacks) AS b(hashes),
               generate_series(0, length(b.hashes) / 16 - 1) AS n
         GROUP BY 1, 2) r
 WHERE s.app_id = r.app_id AND s.hash = r.hash;
DELETE FROM stacks WHERE last_day IS NULL;
ALTER TABLE stacks ALTER COLUMN last_day SET NOT NULL;
COMMENT ON COLUMN stacks.last_day IS
  'The latest received day of the stored reports that refer to this stack: it is deleted when retention drops that day. Only ever raised.';
COMMENT ON TABLE stacks IS
  'Stacks of stored reports, each distinct text once per app, keyed by a 128-bit hash of the text (xxh3 from the server; md5 for what 018 moved): a report keeps the rest of its documents and the hashes (reports.raw_stacks, symbolized_stacks). Its text never changes; deleted by retention with its last day (last_day).';
CREATE INDEX stacks_last_day ON stacks (app_id, last_day);
COMMENT ON INDEX stacks_last_day IS
  'The stacks retention deletes with the days it drops, read without scanning the rest.';

DROP FUNCTION IF EXISTS count_stacks(bigint, uuid[], bigint[], uuid[], text[]);
DROP TABLE stack_refs;
