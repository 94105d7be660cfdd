-- image_name_kept — which of two names of one image (a UUID) dsyms/missing
-- keeps (image_waits.image_name, docs/STORAGE.md "Reprocessing").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Reports name an image by its basename ("Kit") or by its full path on
-- the device ("/private/var/…/Kit.framework/Kit"). The reply shows the
-- basename as `name` and the full path as `path` when one is kept, so a
-- path wins over a basename; between two of a kind, the greater, so the
-- result does not depend on the order reports came in. Not greatest()
-- alone: "/" sorts before letters, so a basename beat every path.
-- Over many rows: image_name_kept(max(n) FILTER (WHERE strpos(n, '/') > 0),
-- max(n)). A SQL expression, inlined into the upserts (ingest_reports,
-- add_report_waits) and the reply (store/groups.c, st_dsyms_missing).

CREATE OR REPLACE FUNCTION image_name_kept(p_a text, p_b text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN strpos(p_a, '/') > 0 AND strpos(p_b, '/') > 0 THEN greatest(p_a, p_b)
              WHEN strpos(p_a, '/') > 0 THEN p_a
              WHEN strpos(p_b, '/') > 0 THEN p_b
              ELSE greatest(p_a, p_b) END
$$;
COMMENT ON FUNCTION image_name_kept(text, text) IS
  'The name of an image kept of two (either NULL for none): the one with a "/" (a full path) when only one has it, else the greater.';
