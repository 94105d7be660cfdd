-- stack_terms — the searchable terms of one stack text (SPEC §10.7,
-- docs/STORAGE.md "Search terms"): each frame's image basename, symbol
-- hint, and its inline chain's functions and files, distinct, each cut to
-- 512 characters (a B-tree entry's bound).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- P_STACK is a thread object ({"frames":[…]}, a stacks row) or an array
-- of frames (group_stack_days.frames, a stack taken from samples); NULL
-- (a lost stack) has none. schema/046 writes the same out for its
-- backfill. A SQL set-returning function, inlined into its callers: the
-- fold and reprocessing, for stacks they count for the first time.

CREATE OR REPLACE FUNCTION stack_terms(p_stack text)
RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT left(t.term, 512)
    FROM (SELECT p_stack::jsonb AS j OFFSET 0) AS s,
         jsonb_array_elements(CASE jsonb_typeof(s.j) WHEN 'array' THEN s.j
                              WHEN 'object' THEN coalesce(s.j->'frames', '[]')
                              ELSE '[]' END) AS f,
         LATERAL (SELECT regexp_replace(f->>'image', '^.*/', '')
                  UNION ALL SELECT f->>'hint_function'
                  UNION ALL SELECT nullif(f->>'symbol_hint', '<redacted>')
                  UNION ALL
                  SELECT e.v
                    FROM jsonb_array_elements(CASE jsonb_typeof(f->'frames')
                                              WHEN 'array' THEN f->'frames'
                                              ELSE '[]' END) AS c,
                         LATERAL (VALUES (c->>'function'), (c->>'file')) AS e(v)) AS t(term)
   WHERE jsonb_typeof(f) = 'object' AND t.term IS NOT NULL AND t.term <> ''
$$;
COMMENT ON FUNCTION stack_terms(text) IS
  'The distinct searchable terms (image basenames, symbol hints, functions and files of the inline chains, each cut to 512 characters) of a stack text: a thread object or an array of frames.';
