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
--    stored report; the OS version and device of the first sighting that
--    says either); a known user's row changes only when its first stored
--    report arrives (reported), or when a check-in says the OS version or
--    device of a user not placed yet (first seen through a stored report,
--    or a check-in that said neither), so a repeated check-in writes
--    nothing. A user whose sightings in one call include a stored report
--    is not placed by that call: the row's update then says "reported",
--    which is what the counts below read it as;
--  * activity_daily adds what changed: new users, new sampled users, rows
--    that became stalled (in the sample and reported), stored reports and
--    their durations; activity_dim_daily the users placed (schema/045),
--    new or known. Stored reports' sightings say neither
--    (fold_group_deltas): only check-ins place users.
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
    -- sighting that says either (a later one does not move the user).
    SELECT d AS day, v AS app_version, u AS user_id,
           bool_or(s AND NOT l) AS in_sample, bool_or(st) AS reported,
           count(*) FILTER (WHERE st) AS reports,
           coalesce(sum(ms) FILTER (WHERE st), 0) AS stall_ms,
           coalesce((array_agg(os ORDER BY o) FILTER (WHERE os <> '' OR dv <> ''))[1], '')
             AS os_version,
           coalesce((array_agg(dv ORDER BY o) FILTER (WHERE os <> '' OR dv <> ''))[1], '')
             AS device
      FROM unnest(p_days, p_versions, p_users, p_sampled, p_listed, p_stored, p_durations,
                  p_os_versions, p_devices) WITH ORDINALITY
             AS x(d, v, u, s, l, st, ms, os, dv, o)
     GROUP BY 1, 2, 3
  ), users AS (
    INSERT INTO activity_users AS a (app_id, day, app_version, user_id, in_sample, reported,
                                     os_version, device)
    SELECT p_app, day, app_version, user_id, in_sample, reported, os_version, device
      FROM seen ORDER BY day, app_version COLLATE "C", user_id COLLATE "C"
    ON CONFLICT (app_id, day, app_version, user_id) DO UPDATE SET
      reported = a.reported OR excluded.reported,
      os_version = CASE WHEN excluded.reported THEN a.os_version ELSE excluded.os_version END,
      device = CASE WHEN excluded.reported THEN a.device ELSE excluded.device END
      WHERE CASE WHEN excluded.reported THEN NOT a.reported
                 ELSE a.os_version = '' AND a.device = ''
                      AND (excluded.os_version <> '' OR excluded.device <> '') END
    -- xmax is 0 on a row this statement inserted, set on one it updated:
    -- by the user's stored report (it became reported) when the call has
    -- one, else by a check-in (it was placed): the WHERE lets one or the
    -- other through, and `returned` tells which from the sightings.
    RETURNING a.day, a.app_version, a.user_id, (a.xmax = 0) AS inserted, a.in_sample,
              a.reported, a.os_version, a.device
  ), returned AS (
    SELECT u.*, s.reported AS by_report
      FROM users u JOIN seen s
        ON s.day = u.day AND s.app_version = u.app_version AND s.user_id = u.user_id
  ), by_dims AS (
    -- Locked after activity_daily's rows (the data-changing parts of a
    -- WITH run last to first): the users placed, new or known.
    INSERT INTO activity_dim_daily AS a (app_id, day, app_version, os_version, device,
                                         active_users, sampled_users)
    SELECT p_app, day, app_version, os_version, device, count(*),
           count(*) FILTER (WHERE in_sample)
      FROM returned
     WHERE (inserted OR NOT by_report) AND (os_version <> '' OR device <> '')
     GROUP BY day, app_version, os_version, device
     ORDER BY day, app_version COLLATE "C", os_version COLLATE "C", device COLLATE "C"
    ON CONFLICT (app_id, day, app_version, os_version, device) DO UPDATE SET
      active_users = a.active_users + excluded.active_users,
      sampled_users = a.sampled_users + excluded.sampled_users
  ), changed AS (
    SELECT day, app_version,
           count(*) FILTER (WHERE inserted) AS active,
           count(*) FILTER (WHERE inserted AND in_sample) AS sampled,
           count(*) FILTER (WHERE in_sample AND reported AND (inserted OR by_report))
             AS stalled
      FROM returned GROUP BY 1, 2
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
  'Counts a batch of sightings (sampling check-ins and stored reports) of users on an app''s days, versions, OS versions and devices into activity_users, activity_daily and activity_dim_daily, each user once per day and version, in one statement with a fixed lock order; a user not yet placed by OS version and device is placed by the first check-in that says them.';
