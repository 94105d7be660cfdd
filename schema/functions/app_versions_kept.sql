-- app_versions_kept — a dsyms/missing counter's app versions with a
-- batch's added (image_waits.app_versions, schema/046).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Distinct and sorted; P_OLD itself when P_ADDED brings no new version
-- (nearly every batch), so the upsert writes the array only when it
-- changes. A SQL expression, inlined into the upserts of ingest_reports
-- and add_report_waits, where P_OLD is the column itself.

CREATE OR REPLACE FUNCTION app_versions_kept(p_old text[], p_added text[])
RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_added <@ p_old THEN p_old
              ELSE ARRAY(SELECT DISTINCT v FROM unnest(p_old || p_added) AS v ORDER BY 1) END
$$;
COMMENT ON FUNCTION app_versions_kept(text[], text[]) IS
  'The distinct versions of p_old and p_added, sorted; p_old itself when p_added adds none.';
