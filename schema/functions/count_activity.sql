-- count_activity — users active on an app's days and versions, counted
-- once each (schema/019_active_users.sql, docs/INGEST.md "Active users").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Element i of every array is one sighting: a sampling check-in (p_stored
-- false, p_durations NULL) or a stored report (true, its duration or
-- NULL) of user p_users[i] on day p_days[i] and version p_versions[i]
-- ('' for a report without one), OS version p_os_versions[i] and device
-- p_devices[i] ('' when not said), with the user's sampling answer for
-- that day and whitelist state. One statement:
--  * a user new to a day and version gets a row (active; in the sample
--    when sampled and not whitelisted; reported when the sighting is a
--    stored report; the sighting's OS version and device); a known user's
--    row changes only when its first stored report arrives (reported), so
--    a repeated check-in writes nothing;
--  * activity_daily adds what changed: new users, new sampled users, rows
--    that became stalled (in the sample and reported), stored reports and
--    their durations; activity_dim_daily the new users and new sampled
--    users per OS version and device (schema/045).
-- ON CONFLICT sees rows committed after the statement began, so two
-- batches sighting one user count them once. Locks in one order: user
-- rows by (day, version, user), then counters by (day, version), then
-- the dimension counters by (day, version, OS version, device);
-- sampling_check_ins and fold_group_deltas (which calls this last, after
-- its group rows, for the reports it counts) both go through here, so
-- they queue instead of deadlocking.

CREATE OR REPLACE FUNCTION count_activity(p_app bigint, p_days date[], p_versions text[],
                                          p_users text[], p_sampled boolean[],
                                          p_listed boolean[], p_stored boolean[],
                                          p_durations bigint[], p_os_versions text[],
                                          p_devices text[])
RETURNS void
LANGUAGE plpgsql
-- Plans built once per session (the ingest_reports rule): re-planning the
-- statement was most of a call.
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
  WITH seen AS (
    -- A user's OS version and device of the day: the batch's first
    -- sighting that says one (a later sighting does not move the user).
    SELECT d AS day, v AS app_version, u AS user_id,
           bool_or(s AND NOT l) AS in_sample, bool_or(st) AS reported,
           count(*) FILTER (WHERE st) AS reports,
           coalesce(sum(ms) FILTER (WHERE st), 0) AS stall_ms,
           coalesce((array_agg(os ORDER BY o) FILTER (WHERE os <> ''))[1], '') AS os_version,
           coalesce((array_agg(dv ORDER BY o) FILTER (WHERE dv <> ''))[1], '') AS device
      FROM unnest(p_days, p_versions, p_users, p_sampled, p_listed, p_stored, p_durations,
                  p_os_versions, p_devices) WITH ORDINALITY
             AS x(d, v, u, s, l, st, ms, os, dv, o)
     GROUP BY 1, 2, 3
  ), users AS (
    INSERT INTO activity_users AS a (app_id, day, app_version, user_id, in_sample, reported,
                                     os_version, device)
    SELECT p_app, day, app_version, user_id, in_sample, reported, os_version, device
      FROM seen ORDER BY day, app_version COLLATE "C", user_id COLLATE "C"
    ON CONFLICT (app_id, day, app_version, user_id) DO UPDATE SET reported = true
      WHERE excluded.reported AND NOT a.reported
    -- xmax is 0 on a row this statement inserted, set on one it updated.
    RETURNING a.day, a.app_version, (a.xmax = 0) AS inserted, a.in_sample, a.reported,
              a.os_version, a.device
  ), by_dims AS (
    -- Locked after activity_daily's rows (the data-changing parts of a
    -- WITH run last to first): only new users count here.
    INSERT INTO activity_dim_daily AS a (app_id, day, app_version, os_version, device,
                                         active_users, sampled_users)
    SELECT p_app, day, app_version, os_version, device, count(*),
           count(*) FILTER (WHERE in_sample)
      FROM users WHERE inserted
     GROUP BY day, app_version, os_version, device
     ORDER BY day, app_version COLLATE "C", os_version COLLATE "C", device COLLATE "C"
    ON CONFLICT (app_id, day, app_version, os_version, device) DO UPDATE SET
      active_users = a.active_users + excluded.active_users,
      sampled_users = a.sampled_users + excluded.sampled_users
  ), changed AS (
    SELECT day, app_version,
           count(*) FILTER (WHERE inserted) AS active,
           count(*) FILTER (WHERE inserted AND in_sample) AS sampled,
           count(*) FILTER (WHERE in_sample AND reported) AS stalled
      FROM users GROUP BY 1, 2
  ), stored AS (
    SELECT day, app_version, sum(reports) AS reports, sum(stall_ms) AS stall_ms
      FROM seen GROUP BY 1, 2
  )
  INSERT INTO activity_daily AS a (app_id, day, app_version, active_users, sampled_users,
                                   stalled_users, reports, stall_ms)
  SELECT p_app, s.day, s.app_version, coalesce(c.active, 0), coalesce(c.sampled, 0),
         coalesce(c.stalled, 0), s.reports, s.stall_ms
    FROM stored s LEFT JOIN changed c ON c.day = s.day AND c.app_version = s.app_version
   WHERE c.day IS NOT NULL OR s.reports > 0
   ORDER BY s.day, s.app_version COLLATE "C"
  ON CONFLICT (app_id, day, app_version) DO UPDATE SET
    active_users = a.active_users + excluded.active_users,
    sampled_users = a.sampled_users + excluded.sampled_users,
    stalled_users = a.stalled_users + excluded.stalled_users,
    reports = a.reports + excluded.reports,
    stall_ms = a.stall_ms + excluded.stall_ms;
END $$;
COMMENT ON FUNCTION count_activity(bigint, date[], text[], text[], boolean[], boolean[],
                                   boolean[], bigint[], text[], text[]) IS
  'Counts a batch of sightings (sampling check-ins and stored reports) of users on an app''s days, versions, OS versions and devices into activity_users, activity_daily and activity_dim_daily, each user once per day and version, in one statement with a fixed lock order.';
