-- app_version_key — the sort key of an app version and build (SPEC §10.3):
-- ORDER BY app_version_key(app_version, build) is the version order.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The rule (docs/TRIAGE.md "Version order"): app_version is split at dots
-- into parts, each part into runs of digits and runs of anything else.
-- Parts compare in turn; within a part, a run of digits compares as a
-- number (leading zeros ignored: 2.10 after 2.9, 2.010 = 2.10), any other
-- run as text, byte by byte, after every number (2.9 before 2.9a, the
-- SPEC's "a non-numeric part compares as text after numbers"). What ends
-- first comes first: 1.0 before 1.0.0 before 1.0.1, and 2.9 before
-- 2.9-beta (there is no pre-release rule). Equal versions compare by
-- build the same way. NULL counts as ''.
--
-- The key is a bytea[], compared element by element and bytes by bytes,
-- whatever the database's collation: a digit run is \x02, its length in
-- four digits and the digits; any other run \x03 and its bytes; \x01
-- ends a part; one empty element separates the version from the build,
-- so it orders before every part ("1.0" with any build before "1.0.0").

CREATE OR REPLACE FUNCTION app_version_key(p_version text, p_build text)
RETURNS bytea[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(e ORDER BY w, p, t), '{}')
    FROM (SELECT w, p, t,
                 CASE WHEN m IS NULL THEN '\x01'::bytea
                      WHEN m ~ '^[0-9]' THEN
                        '\x02'::bytea
                        || convert_to(lpad(length(ltrim(m, '0'))::text, 4, '0')
                                      || ltrim(m, '0'), 'UTF8')
                      ELSE '\x03'::bytea || convert_to(m, 'UTF8') END AS e
            FROM (VALUES (1, coalesce(p_version, '')), (2, coalesce(p_build, ''))) AS s(w, v),
                 LATERAL (SELECT p, part FROM unnest(string_to_array(v, '.'))
                                             WITH ORDINALITY AS x(part, p)
                           WHERE v <> '') AS parts,
                 LATERAL (SELECT t, m[1] AS m
                            FROM regexp_matches(part, '[0-9]+|[^0-9]+', 'g')
                                 WITH ORDINALITY AS y(m, t)
                          UNION ALL SELECT 2147483647, NULL) AS runs
          UNION ALL SELECT 1, 2147483647, 0, ''::bytea) AS keyed
$$;
COMMENT ON FUNCTION app_version_key(text, text) IS
  'The version order of SPEC §10.3 as a sort key: app_version by dot-separated parts, digit runs as numbers before text runs, a shorter version first, then build the same way.';
