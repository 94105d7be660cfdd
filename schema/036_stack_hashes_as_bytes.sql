-- 036_stack_hashes_as_bytes.sql — a report keeps its stack hashes as
-- bytes, 16 each, end to end, instead of two uuid[].
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25, bytes per report): an array carries a 20-byte header
-- (dimensions, bounds, element type) before its elements, and a report
-- has two (raw_stacks, symbolized_stacks): 40 of the 106 bytes a
-- report of one thread spent on its hashes at 1,000,000 reports. As
-- bytea the hashes are the same 16 bytes each behind a 1-byte length.
-- Nothing indexes them; they are read by rank (unstack, the call tree's
-- scan: stack_at) or all at once (reprocessing, retention: stack_hashes,
-- or a scan by rank). Function files hold the conversions; a numbered
-- migration calls none, so the conversion is written here once more.
-- unstack takes the bytes now: its uuid[] form goes (IF EXISTS: a fresh
-- database has no function file applied yet).

ALTER TABLE reports
  ALTER COLUMN raw_stacks DROP DEFAULT,
  ALTER COLUMN raw_stacks TYPE bytea
    USING decode(translate(array_to_string(raw_stacks, ''), '-', ''), 'hex'),
  ALTER COLUMN raw_stacks SET DEFAULT '',
  ALTER COLUMN symbolized_stacks DROP DEFAULT,
  ALTER COLUMN symbolized_stacks TYPE bytea
    USING decode(translate(array_to_string(symbolized_stacks, ''), '-', ''), 'hex'),
  ALTER COLUMN symbolized_stacks SET DEFAULT '';
COMMENT ON COLUMN reports.raw_stacks IS
  'Hashes of the stacks of raw (stacks), in text order, 16 bytes each end to end (stack_bytes, stack_at): one per 0x01 byte of raw.';
COMMENT ON COLUMN reports.symbolized_stacks IS
  'Hashes of the stacks of symbolized (stacks), in text order, 16 bytes each end to end (stack_bytes, stack_at): one per 0x01 byte of symbolized.';

DROP FUNCTION IF EXISTS unstack(bigint, text, uuid[]);
