-- frames_wait_for_symbols — whether a group's frames include one of an app
-- image that has no usable debug file yet (SPEC §11.1).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Such a group is temporary: its key holds "image+0xoffset", which the
-- image's dSYM turns into a function name, and every report in it moves
-- out when the file arrives. It raises no event. A frame of a system
-- image without symbols also stays "image+0x…", but nobody uploads those
-- for a team: its group is real. The waits (as ingest_reports takes them)
-- say which images are the app's own: reasons missing and malformed.

CREATE OR REPLACE FUNCTION frames_wait_for_symbols(p_frames jsonb, p_waits jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(p_waits <> '[]' AND EXISTS (
    SELECT 1
      FROM jsonb_array_elements_text(p_frames) AS f(identity),
           jsonb_to_recordset(p_waits) AS w(image_name text, reason text),
           LATERAL (SELECT regexp_replace(coalesce(w.image_name, '?'), '^.*/', '') || '+0x'
                      AS prefix) p
     WHERE w.reason IN ('missing', 'malformed')
       AND left(f.identity, length(p.prefix)) = p.prefix), false)
$$;
COMMENT ON FUNCTION frames_wait_for_symbols(jsonb, jsonb) IS
  'True when one of the identities P_FRAMES (a group''s frames) is an unsymbolized frame ("image+0x…") of an image the report waits for with reason missing or malformed (P_WAITS: [{"image_name","reason",…}]): the group is temporary and raises no event.';
