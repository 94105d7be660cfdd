-- group_triage — what a group reply adds for triage (SPEC §10.2, §10.3):
-- affected user-days and rate under the list's filters, first and last
-- version and new_in.
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Everything comes from aggregates read by primary key (schema/023): no
-- report row.
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
--  * new_in: first_version when it is P_NEWEST (app_newest_version), the
--    app's newest version, in version order ("2.010" is "2.10"): every
--    report of the group is of that version.
-- NULL filters do not filter, as in the group routes.

CREATE OR REPLACE FUNCTION group_triage(p_app bigint, p_level smallint, p_key text,
                                        p_from date, p_to date, p_version text,
                                        p_os_version text, p_device text, p_kind text,
                                        p_newest text)
RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  WITH affected AS (
    SELECT coalesce(sum(n), 0)::bigint AS n
      FROM (-- Under two or more dimension filters: the combinations' rows.
            SELECT hll_cardinality(hll_union_agg(d.users)) AS n FROM group_dim_days d
             WHERE d.app_id = p_app AND d.level = p_level AND d.key = p_key AND d.in_sample
               AND d.reports > 0
               AND (p_from IS NULL OR d.day >= p_from) AND (p_to IS NULL OR d.day <= p_to)
               AND (p_version IS NULL OR d.app_version = p_version)
               AND (p_os_version IS NULL OR d.os_version = p_os_version)
               AND (p_device IS NULL OR d.device = p_device)
               AND (p_kind IS NULL OR d.kind = p_kind)
               AND num_nonnulls(p_version, p_os_version, p_device, p_kind) > 1
             GROUP BY d.day
            -- Under one: per day the value's row, its count.
            UNION ALL
            SELECT f.affected FROM group_facet_days f
             WHERE f.app_id = p_app AND f.level = p_level AND f.key = p_key
               AND (p_from IS NULL OR f.day >= p_from) AND (p_to IS NULL OR f.day <= p_to)
               AND f.dim = CASE WHEN p_version IS NOT NULL THEN 'version'
                                WHEN p_os_version IS NOT NULL THEN 'os_version'
                                WHEN p_device IS NOT NULL THEN 'device' ELSE 'kind' END
               AND f.value = coalesce(p_version, p_os_version, p_device, p_kind)
               AND num_nonnulls(p_version, p_os_version, p_device, p_kind) = 1
            -- Otherwise: per day, the union of its versions' rows.
            UNION ALL
            SELECT hll_cardinality(hll_union_agg(f.sample_users)) FROM group_facet_days f
             WHERE f.app_id = p_app AND f.level = p_level AND f.key = p_key
               AND (p_from IS NULL OR f.day >= p_from) AND (p_to IS NULL OR f.day <= p_to)
               AND f.dim = 'version'
               AND num_nonnulls(p_version, p_os_version, p_device, p_kind) = 0
             GROUP BY f.day) AS per_day
  ), sampled AS (
    SELECT coalesce(sum(a.sampled_users), 0)::bigint AS n FROM activity_daily a
     WHERE a.app_id = p_app AND (p_from IS NULL OR a.day >= p_from)
       AND (p_to IS NULL OR a.day <= p_to)
       AND (p_version IS NULL OR a.app_version = p_version)
  ), versions AS (
    SELECT (array_agg(v.app_version ORDER BY app_version_key(v.app_version, ''),
                      v.app_version COLLATE "C"))[1] AS first,
           (array_agg(v.app_version ORDER BY app_version_key(v.app_version, '') DESC,
                      v.app_version COLLATE "C" DESC))[1] AS last
      FROM (SELECT DISTINCT f.value AS app_version FROM group_facet_days f
             WHERE f.app_id = p_app AND f.level = p_level AND f.key = p_key
               AND f.dim = 'version' AND f.value <> '' AND f.reports > 0) AS v
  )
  SELECT jsonb_build_object('affected', a.n,
                            'rate', CASE WHEN s.n > 0 THEN a.n::float8 / s.n END,
                            'first_version', v.first, 'last_version', v.last,
                            'new_in', CASE WHEN app_version_key(v.first, '') = app_version_key(p_newest, '')
                                      THEN v.first END)
    FROM affected a, sampled s, versions v
$$;
COMMENT ON FUNCTION group_triage(bigint, smallint, text, date, date, text, text, text, text,
                                 text) IS
  'A group reply''s triage members from aggregates: affected (distinct sampled, non-whitelisted user-days under the filters), rate (affected over the sampled user-days of the same days and version), first_version, last_version and new_in (given the app''s newest version).';
