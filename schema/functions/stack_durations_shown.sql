-- stack_durations_shown — a report's symbolized document as the report's
-- view shows it: an Android stack's durations in its frames (schema/051).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- P_DOC is the document with its stacks put back (unstack) and the
-- representative stack's frames in "stack" (store/groups.c). Its
-- durations are stored beside the frames ("java_ms", "java_count":
-- ingest/symbolicate.h) so that the stack's text, its identity, does not
-- depend on them; the view puts each frame's "ms" and "count" back, in
-- the stack's frames and in its thread's, and drops the arrays.
CREATE OR REPLACE FUNCTION stack_durations_shown(p_doc jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN NOT coalesce(p_doc->'stack' ? 'java_ms', false) THEN p_doc
              ELSE jsonb_set(CASE WHEN p_doc->'stack' ? 'thread'
                                  THEN jsonb_set(p_doc, ARRAY['threads', p_doc->'stack'->>'thread',
                                                              'frames'], f.frames)
                                  ELSE p_doc END,
                             '{stack}', ((p_doc->'stack') - 'java_ms'::text - 'java_count'::text)
                                        || jsonb_build_object('frames', f.frames)) END
    FROM (SELECT coalesce(jsonb_agg(CASE WHEN s->'java_ms'->>(i::int - 1) IS NULL THEN fr
                                         ELSE fr || jsonb_build_object(
                                                      'ms', s->'java_ms'->(i::int - 1),
                                                      'count', s->'java_count'->(i::int - 1))
                                         END ORDER BY i), '[]') AS frames
            FROM (SELECT p_doc->'stack' AS s) AS x,
                 jsonb_array_elements(CASE WHEN x.s ? 'java_ms' THEN x.s->'frames' END)
                   WITH ORDINALITY AS e(fr, i)) AS f
$$;
COMMENT ON FUNCTION stack_durations_shown(jsonb) IS
  'A report''s document (unstacked, the representative stack''s frames in "stack") with an Android stack''s per-frame durations (java_ms, java_count) put back into its frames as "ms" and "count", in "stack" and in its thread; unchanged without them.';
