-- 045 — rates under an OS version or device filter divide by the users of
-- that OS version or device (SPEC §10.2).
--
-- A sampling check-in may now carry os_version and device (the native
-- client sends both). A user's row of the day and version keeps the ones
-- of the first check-in that said either ('' until one does: a user
-- first seen through a stored report, or an older client, is placed by a
-- later check-in that says them; reports never place a user, since the
-- SPEC divides by the users "as the check-ins reported them").
-- activity_dim_daily counts the placed users per day, app version, OS
-- version and device, so a filtered rate's denominator is a sum over a
-- few rows. Where no sampled user of the range was placed, the reply says
-- rate_basis "all_devices" and divides by everyone (groups_triage).
--
-- Upgrade: check-ins before this migration said neither; nobody is placed
-- and the new table starts empty.

ALTER TABLE activity_users ADD COLUMN os_version text NOT NULL DEFAULT '',
                           ADD COLUMN device text NOT NULL DEFAULT '';
COMMENT ON COLUMN activity_users.os_version IS
  'The OS version of the user''s first check-in of the day and version that said an OS version or device ('''' until one did): counted in activity_dim_daily.';
COMMENT ON COLUMN activity_users.device IS
  'The device model of the user''s first check-in of the day and version that said an OS version or device ('''' until one did): counted in activity_dim_daily.';

CREATE TABLE activity_dim_daily (
  app_id bigint NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  os_version text NOT NULL,
  device text NOT NULL,
  active_users bigint NOT NULL DEFAULT 0 CHECK (active_users >= 0),
  sampled_users bigint NOT NULL DEFAULT 0 CHECK (sampled_users >= 0),
  PRIMARY KEY (app_id, day, app_version, os_version, device)
);
COMMENT ON TABLE activity_dim_daily IS
  'Per app, UTC day, app version, OS version and device ('''' for the one a check-in did not say): distinct active users and sampled non-whitelisted users placed there by their check-ins (count_activity). The denominators of rates under an OS version or device filter (groups_triage); kept through retention.';
COMMENT ON INDEX activity_dim_daily_pkey IS
  'The range a filtered rate''s denominator sums, by (app_id, day), and the row count_activity adds a new user to.';

-- Both take the dimensions now.
DROP FUNCTION IF EXISTS count_activity(bigint, date[], text[], text[], boolean[], boolean[],
                                       boolean[], bigint[]);
DROP FUNCTION IF EXISTS sampling_check_ins(bigint, bigint, date[], timestamptz[], text[], text[],
                                           boolean[]);
