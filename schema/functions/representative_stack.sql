-- representative_stack — a stored report's representative stack as
-- group_stack_days keys it (schema/024, docs/STORAGE.md "Reading").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- P_SYMBOLIZED is the skeleton (one 0x01 byte per stack, schema/018),
-- P_STACKS its stacks' hashes, the images' first: a "stack" naming thread
-- i is the hash at i + 2. The skeleton is parsed once (OFFSET 0 keeps the
-- parse a subquery of its own rather than one per output column).
-- One row, yet declared as a set: a SQL set-returning function (not
-- strict, not volatile, no SET) is inlined into the calling statement and
-- planned with it; called instead, it ran its own executor for every row
-- (20,000 skeletons: 145-178 ms called, 48-54 ms inlined).
-- MS: an Android stack's per-frame durations ("java_ms", schema/051),
-- NULL when the skeleton has none.

CREATE OR REPLACE FUNCTION representative_stack(p_symbolized text, p_stacks uuid[])
RETURNS TABLE (stack uuid, frames text, ms bigint[])
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN st ? 'thread'
              THEN coalesce(p_stacks[(st->>'thread')::int + 2],
                            '00000000-0000-0000-0000-000000000000')
              WHEN st->'frames' IS NULL THEN '00000000-0000-0000-0000-000000000000'
              ELSE md5((st->'frames')::text)::uuid END,
         CASE WHEN st ? 'thread' THEN NULL ELSE (st->'frames')::text END,
         CASE WHEN st ? 'java_ms'
              THEN ARRAY(SELECT v::bigint FROM jsonb_array_elements_text(st->'java_ms')
                                               WITH ORDINALITY AS e(v, i) ORDER BY i) END
    FROM (SELECT (replace(p_symbolized, chr(1), '0')::jsonb)->'stack' AS st OFFSET 0) AS s
$$;
COMMENT ON FUNCTION representative_stack(text, uuid[]) IS
  'The representative stack of a report''s skeleton and stack hashes: the thread''s hash (frames NULL), or for frames held inline their md5 and their JSON text, or the nil uuid when the stack is lost; and an Android stack''s per-frame durations (java_ms), else NULL.';
