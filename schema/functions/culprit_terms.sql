-- culprit_terms — the searchable terms of a group's culprit and keyed
-- frames (SPEC §10.7, docs/STORAGE.md "Search terms"): the culprit's
-- function, file and image, and each key frame's image and function
-- ("image!function", "image+0x…"), distinct, each cut to 512 characters.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Every group has them, its representative stacks kept or not: a group
-- whose stack is lost (the nil stack, which stack_terms gives nothing
-- for) is still found by what its title shows. ingest_reports adds them
-- once, for each group it makes; schema/046 wrote the same out for the
-- groups of before. P_FRAMES is groups.frames (an array of identities);
-- either may be NULL. Inlined into its caller.

CREATE OR REPLACE FUNCTION culprit_terms(p_culprit jsonb, p_frames jsonb)
RETURNS SETOF text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT DISTINCT left(t.term, 512)
    FROM (SELECT p_culprit->>'function'
          UNION ALL SELECT p_culprit->>'file'
          UNION ALL SELECT regexp_replace(p_culprit->>'frame', '(!.*|\+0x[0-9a-f]*)$', '')
          UNION ALL
          SELECT x.part
            FROM jsonb_array_elements_text(CASE jsonb_typeof(p_frames) WHEN 'array'
                                           THEN p_frames ELSE '[]' END) AS i(id),
                 LATERAL (VALUES (regexp_replace(i.id, '(!.*|\+0x[0-9a-f]*)$', '')),
                                 (CASE WHEN strpos(i.id, '!') > 0
                                       THEN substr(i.id, strpos(i.id, '!') + 1) END))
                   AS x(part)) AS t(term)
   WHERE t.term IS NOT NULL AND t.term <> ''
$$;
COMMENT ON FUNCTION culprit_terms(jsonb, jsonb) IS
  'The distinct searchable terms (each cut to 512 characters) of a group''s culprit (function, file, image) and of its keyed frames (image and function of each identity).';
