-- 018_stacks.sql — each distinct stack stored once per app; reports refer
-- to it (docs/STORAGE.md "Stacks").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- A report's two documents were most of its bytes (at a million reports
-- 3.3 KB each, 2 KB of it TOAST), and most of them repeat from report to
-- report: the images list and the stacks of a stall are the same for
-- every report of it. Like btrace's CallstackTable, a stack is now kept
-- once: the server marks the stacks of each document (its images array
-- and each thread), the row
-- keeps the rest of the text with one 0x01 byte where each stack was
-- (JSON escapes control characters inside strings, so the byte is never
-- part of the document) and the stacks' hashes in order; unstack() puts
-- the text back.

CREATE TABLE stacks (
  app_id bigint NOT NULL,
  hash uuid NOT NULL,
  body text COMPRESSION lz4 NOT NULL,
  PRIMARY KEY (app_id, hash)
);
COMMENT ON TABLE stacks IS
  'Stacks of stored reports, each distinct text once per app, keyed by a 128-bit hash of the text (xxh3 from the server; md5 for what 018 moved): a report keeps the rest of its documents and the hashes (reports.raw_stacks, symbolized_stacks). Never updated; deleted when no report refers to it (stack_refs).';
COMMENT ON INDEX stacks_pkey IS
  'Finds a stack by hash when a report is read, and makes a stack stored twice one row.';

CREATE TABLE stack_refs (
  app_id bigint NOT NULL,
  hash uuid NOT NULL,
  -- No CHECK (refs >= 0): it would judge the row an upsert proposes,
  -- whose refs is a change that may be negative, not the row stored.
  refs bigint NOT NULL,
  PRIMARY KEY (app_id, hash)
);
COMMENT ON TABLE stack_refs IS
  'How many places in stored reports refer to each stack: counted at ingest, when reprocessing replaces a stack and when retention drops a day; a stack is deleted with its count at 0. Apart from stacks so that counting rewrites a narrow row, not the stack.';
COMMENT ON INDEX stack_refs_pkey IS
  'One count per stack, locked in hash order by every transaction that counts.';

ALTER TABLE reports
  ADD COLUMN raw_stacks uuid[] NOT NULL DEFAULT '{}',
  ADD COLUMN symbolized_stacks uuid[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN reports.raw_stacks IS
  'Hashes of the stacks of raw (stacks), in text order: one per 0x01 byte of raw.';
COMMENT ON COLUMN reports.symbolized_stacks IS
  'Hashes of the stacks of symbolized (stacks), in text order: one per 0x01 byte of symbolized.';

DROP FUNCTION ingest_reports(bigint, bigint, text[], text[], date[], timestamptz[], boolean[],
                             text[], text[], text[], text[], text[], text[], text[], text[],
                             text[], bigint[], text[], text[], boolean[], text[], text[],
                             text[], text[], text[]);

-- The stored reports, split as the server splits them: in both documents
-- the images array and each thread. Their stacks are read back through
-- jsonb, so their text is jsonb's (a report's page reads both documents as
-- jsonb, and reprocessing and traces parse raw: both see the same values);
-- key1 and key2 leave symbolized, where the row's own columns always
-- overrode them.
WITH documents AS (
  SELECT r.app_id, r.received_day, r.id, k.which, k.d,
         CASE WHEN jsonb_typeof(k.d->'threads') = 'array' THEN k.d->'threads' END AS threads
    FROM reports r,
         LATERAL (VALUES ('raw', r.raw::jsonb),
                         ('symbolized', r.symbolized::jsonb - 'key1' - 'key2')) AS k(which, d)
), split AS (
  SELECT app_id, received_day, id, which,
         CASE WHEN rest = '{}' THEN '{' || tail || '}'
              WHEN tail = '' THEN rest::text
              ELSE left(rest::text, -1) || ', ' || tail || '}' END AS skeleton,
         array_remove(ARRAY[(d->'images')::text], NULL)
           || ARRAY(SELECT t::text FROM jsonb_array_elements(threads) WITH ORDINALITY AS a(t, o)
                     ORDER BY o) AS pieces
    FROM documents,
         LATERAL (SELECT CASE WHEN threads IS NULL THEN d - 'images'
                              ELSE d - 'images' - 'threads' END AS rest,
                         concat_ws(', ', CASE WHEN d ? 'images' THEN '"images": ' || chr(1) END,
                                   CASE WHEN threads IS NOT NULL THEN
                                     '"threads": [' || array_to_string(
                                       array_fill(chr(1), ARRAY[jsonb_array_length(threads)]),
                                       ', ') || ']' END) AS tail) AS cut
), hashed AS (
  SELECT app_id, received_day, id, which, skeleton, pieces,
         ARRAY(SELECT md5(p)::uuid FROM unnest(pieces) WITH ORDINALITY AS a(p, o) ORDER BY o)
           AS hashes
    FROM split
), kept AS (
  INSERT INTO stacks (app_id, hash, body)
  SELECT DISTINCT ON (app_id, md5(p)::uuid) app_id, md5(p)::uuid, p
    FROM split, unnest(pieces) AS p
), counted AS (
  INSERT INTO stack_refs (app_id, hash, refs)
  SELECT app_id, md5(p)::uuid, count(*) FROM split, unnest(pieces) AS p GROUP BY 1, 2
)
UPDATE reports r
   SET raw = w.skeleton, raw_stacks = w.hashes,
       symbolized = y.skeleton, symbolized_stacks = y.hashes
  FROM hashed w, hashed y
 WHERE w.which = 'raw' AND y.which = 'symbolized'
   AND (w.app_id, w.received_day, w.id) = (r.app_id, r.received_day, r.id)
   AND (y.app_id, y.received_day, y.id) = (r.app_id, r.received_day, r.id);
