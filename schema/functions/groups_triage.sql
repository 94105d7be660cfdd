-- groups_triage — what the group replies of one page add for triage (SPEC
-- §10.2, §10.3): per group, affected user-days and rate under the list's
-- filters, first and last version and new_in.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Set-based over the page's keys (P_KEYS, one row each): the parts every
-- group shares (the sampled user-days, the app's newest version, each
-- version's sort key) are read once a page, not once a group (schema/025:
-- group_triage, called per listed group, was most of a list's time).
-- Everything comes from aggregates read by primary key: no report row.
--  * affected: per day, the distinct in-sample users of the day's matching
--    rows, summed over the days: distinct (user, day) pairs. Under one
--    dimension filter from group_facet_days (the value's count as kept),
--    without any from the union of the day's few version rows there, and
--    under two or more from group_dim_days' in-sample rows (hundreds per
--    group and day).
--  * rate: affected ÷ the sampled user-days of the same days (the filter's
--    range, all days without one) and version (all versions without one):
--    activity_daily.sampled_users summed. NULL when that is 0. The OS
--    version, device and kind filters narrow the numerator only: check-ins
--    are counted per version, not per device (docs/TRIAGE.md).
--  * first_version, last_version: the least and greatest app version of
--    the group's reports of all time (app_version_key; reports without a
--    version are none), whatever the filters, which would otherwise make
--    them the filtered version.
--  * new_in: first_version when it is the app's newest version
--    (app_newest_version) in version order ("2.010" is "2.10"): every
--    report of the group is of that version.
-- NULL filters do not filter, as in the group routes.
-- PL/pgSQL planning its one query at each call with the call's values, not
-- SQL: the lists pass the page's keys as a subquery, which keeps a SQL
-- function from being inlined, and PostgreSQL then plans its body once
-- for any arguments: every "p_x IS NULL OR …" stays, the three ways of
-- counting affected users all run, and the filters reach no index. At
-- 1,000,000 reports that was 36 of a two-filter list's ~130 ms, against
-- 11 planned with the values (docs/journal/performance.md).

CREATE OR REPLACE FUNCTION groups_triage(p_app bigint, p_level smallint, p_keys text[],
                                         p_from date, p_to date, p_version text,
                                         p_os_version text, p_device text, p_kind text)
RETURNS TABLE (key text, triage jsonb) LANGUAGE plpgsql STABLE PARALLEL SAFE
SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  RETURN QUERY
  WITH per_day AS (
    -- Under two or more dimension filters: the combinations' rows.
    SELECT d.key, hll_cardinality(hll_union_agg(d.users)) AS n FROM group_dim_days d
     WHERE d.app_id = p_app AND d.level = p_level AND d.key = ANY (p_keys) AND d.in_sample
       AND d.reports > 0
       AND (p_from IS NULL OR d.day >= p_from) AND (p_to IS NULL OR d.day <= p_to)
       AND d.combo = ANY (ARRAY(SELECT c.id FROM dim_combos c
                                 WHERE c.app_id = p_app
                                   AND (p_version IS NULL OR c.app_version = p_version)
                                   AND (p_os_version IS NULL OR c.os_version = p_os_version)
                                   AND (p_device IS NULL OR c.device = p_device)
                                   AND (p_kind IS NULL OR c.kind = p_kind)))
       AND num_nonnulls(p_version, p_os_version, p_device, p_kind) > 1
     GROUP BY d.key, d.day
    -- Under one: per day the value's row, its count.
    UNION ALL
    SELECT f.key, f.affected FROM group_facet_days f
     WHERE f.app_id = p_app AND f.level = p_level AND f.key = ANY (p_keys)
       AND (p_from IS NULL OR f.day >= p_from) AND (p_to IS NULL OR f.day <= p_to)
       AND f.dim = CASE WHEN p_version IS NOT NULL THEN 'version'
                        WHEN p_os_version IS NOT NULL THEN 'os_version'
                        WHEN p_device IS NOT NULL THEN 'device' ELSE 'kind' END
       AND f.value = coalesce(p_version, p_os_version, p_device, p_kind)
       AND num_nonnulls(p_version, p_os_version, p_device, p_kind) = 1
    -- Otherwise: per day, the union of its versions' rows.
    UNION ALL
    SELECT f.key, hll_cardinality(hll_union_agg(coalesce(f.sample_users, f.users)))
      FROM group_facet_days f
     WHERE f.app_id = p_app AND f.level = p_level AND f.key = ANY (p_keys)
       AND (p_from IS NULL OR f.day >= p_from) AND (p_to IS NULL OR f.day <= p_to)
       AND f.dim = 'version'
       AND num_nonnulls(p_version, p_os_version, p_device, p_kind) = 0
     GROUP BY f.key, f.day
  ), affected AS (
    SELECT p.key, sum(p.n)::bigint AS n FROM per_day p GROUP BY p.key
  ), dim_sampled AS (
    -- Under an OS version or device filter (schema/045): the sampled users
    -- of that OS version or device, and those whose sightings said the
    -- filtered dimensions at all. None said: the rate divides by everyone
    -- and says so (rate_basis), rather than by an unknown few.
    SELECT coalesce(sum(x.sampled_users)
                      FILTER (WHERE (p_os_version IS NULL OR x.os_version = p_os_version)
                                AND (p_device IS NULL OR x.device = p_device)), 0)::bigint
             AS filtered,
           coalesce(sum(x.sampled_users)
                      FILTER (WHERE (p_os_version IS NULL OR x.os_version <> '')
                                AND (p_device IS NULL OR x.device <> '')), 0)::bigint AS known
      FROM activity_dim_daily x
     WHERE (p_os_version IS NOT NULL OR p_device IS NOT NULL) AND x.app_id = p_app
       AND (p_from IS NULL OR x.day >= p_from) AND (p_to IS NULL OR x.day <= p_to)
       AND (p_version IS NULL OR x.app_version = p_version)
  ), sampled AS (
    SELECT CASE WHEN ds.known > 0 THEN ds.filtered ELSE every.n END AS n,
           CASE WHEN ds.known > 0 THEN 'filtered' ELSE 'all_devices' END AS basis
      FROM dim_sampled ds,
           (SELECT coalesce(sum(a.sampled_users), 0)::bigint AS n FROM activity_daily a
             WHERE a.app_id = p_app AND (p_from IS NULL OR a.day >= p_from)
               AND (p_to IS NULL OR a.day <= p_to)
               AND (p_version IS NULL OR a.app_version = p_version)) AS every
  ), versions AS (
    SELECT DISTINCT f.key, f.value FROM group_facet_days f
     WHERE f.app_id = p_app AND f.level = p_level AND f.key = ANY (p_keys)
       AND f.dim = 'version' AND f.value <> '' AND f.reports > 0
  ), ordered AS MATERIALIZED (
    -- Each distinct version's sort key computed once (inlined, the
    -- planner computed it per row of the join, and the newest's per key).
    SELECT x.value, app_version_key(x.value, '') AS k
      FROM (SELECT DISTINCT v.value FROM versions v) AS x
  ), span AS (
    SELECT v.key, (array_agg(v.value ORDER BY o.k, v.value COLLATE "C"))[1] AS first,
           (array_agg(v.value ORDER BY o.k DESC, v.value COLLATE "C" DESC))[1] AS last,
           min(o.k) AS first_k
      FROM versions v JOIN ordered o ON o.value = v.value
     GROUP BY v.key
  ), newest AS MATERIALIZED (
    SELECT app_version_key(app_newest_version(p_app), '') AS k
  )
  SELECT k.key, jsonb_build_object('affected', coalesce(a.n, 0),
                                   'rate', CASE WHEN s.n > 0 THEN coalesce(a.n, 0)::float8 / s.n END,
                                   'rate_basis', s.basis,
                                   'first_version', v.first, 'last_version', v.last,
                                   'new_in', CASE WHEN v.first_k = nw.k THEN v.first END,
                                   'status', coalesce(st.status, 'open'))
                || jsonb_strip_nulls(jsonb_build_object(
                     'resolved_in', st.resolved_in,
                     'until', to_char(st.until_at AT TIME ZONE 'UTC',
                                      'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                     'until_reports', st.until_reports))
    FROM (SELECT DISTINCT unnest(p_keys) AS key) AS k
    LEFT JOIN affected a ON a.key = k.key
    LEFT JOIN span v ON v.key = k.key
    -- The status is the level-1 key's (schema/043); a subgroup shows its
    -- parent's.
    LEFT JOIN LATERAL (
      SELECT x.status, x.resolved_in, x.until_at, x.until_reports FROM group_status x
       WHERE x.app_id = p_app
         AND x.key1 = CASE WHEN p_level = 1 THEN k.key
                           ELSE (SELECT g.parent_key FROM groups g
                                  WHERE g.app_id = p_app AND g.level = 2 AND g.key = k.key) END
    ) st ON true
    CROSS JOIN sampled s CROSS JOIN newest nw;
END $$;
COMMENT ON FUNCTION groups_triage(bigint, smallint, text[], date, date, text, text, text, text) IS
  'The triage members of a page of group replies, one row per key of p_keys, from aggregates: affected (distinct sampled, non-whitelisted user-days under the filters), rate (affected over the sampled user-days of the same days and version, and of the OS version or device filtered when check-ins said them: rate_basis filtered, else all_devices), first_version, last_version and new_in (first_version when it is the app''s newest version), and the level-1 key''s status (open when none is set) with resolved_in, until and until_reports when set.';
