-- app_newest_version — the greatest app version an app has reports for,
-- in the version order (app_version_key), or NULL.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A group's new_in (SPEC §10.3) is its first version when that is this
-- one. Read from app_dimensions (per day, kept through retention and
-- untouched by reprocessing), once per reply: a few rows per day.
-- Reports without a version ('') are no version.

CREATE OR REPLACE FUNCTION app_newest_version(p_app bigint)
RETURNS text LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
  -- plpgsql: its body is checked at the first call, and app_version_key
  -- is applied after this file (name order).
  RETURN (SELECT v.value
    FROM (SELECT a.value FROM app_dimensions a
           WHERE a.app_id = p_app AND a.dim = 'version' AND a.value <> ''
           GROUP BY a.value HAVING sum(a.reports) > 0) AS v
   ORDER BY app_version_key(v.value, '') DESC, v.value COLLATE "C" DESC
   LIMIT 1);
END $$;
COMMENT ON FUNCTION app_newest_version(bigint) IS
  'The newest app version (SPEC §10.3 order) an app has stored reports of, NULL when none has a version: what a group''s new_in compares with.';
