-- 019_active_users.sql — active, sampled and stalled users per app, UTC
-- day and app version (SPEC §10.2), counted from sampling check-ins and
-- stored reports.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why two tables: a rate needs its denominator, the distinct sampled users
-- of a day and version, and "distinct" needs to know who was counted
-- already. activity_users holds one row per (app, day, version, user):
-- exact counts (SPEC allows a HyperLogLog estimate only above 100,000 a
-- day; exact is always allowed, and no extension is needed), bounded by
-- the daily active users times the retention window, and a repeated
-- check-in costs one index probe and writes nothing. activity_daily holds
-- the counters the stats route reads, a handful of rows per day, kept
-- after retention like group_daily (so old days' rates stay readable);
-- activity_users rows older than the retention window are deleted by day
-- in the retention pass (nothing reads them after their day: they only
-- decide whether a user is new to a day).
-- Size: ~100 bytes a row with its index; 200,000 daily users for 7 days
-- is ~140 MB. Should that matter, the unsampled users' rows (95% at the
-- default rate) are the ones an HLL sketch in activity_daily could
-- replace; the sampled users' rows must stay for the exact sampled and
-- stalled counts.
--
-- Both tables are written by count_activity (schema/functions/), once per
-- batch of check-ins (server/service/activity_commit.c) and once per
-- ingest batch for its stored reports (ingest_reports): a row's flags are
-- decided by the user's first check-in or stored report of the day and
-- version, so a user whitelisted later that day stays in the sample, and
-- stalled users are always a subset of sampled users.
-- Nothing is backfilled: check-ins before this migration were not
-- recorded, so rates of earlier days would have no denominator.

CREATE TABLE activity_users (
  app_id bigint NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  user_id text NOT NULL,
  in_sample boolean NOT NULL,
  reported boolean NOT NULL,
  PRIMARY KEY (app_id, day, app_version, user_id)
);
COMMENT ON TABLE activity_users IS
  'One row per user active on an app''s UTC day and version (a sampling check-in with app_version or a stored report): makes active_users, sampled_users and stalled_users of activity_daily exact counts of distinct users. Deleted by day after the retention window.';
COMMENT ON COLUMN activity_users.in_sample IS
  'Sampled that day (ing_sampled) and not whitelisted, at the user''s first check-in or stored report of the day and version: counted in sampled_users.';
COMMENT ON COLUMN activity_users.reported IS
  'At least one stored report that day and version: with in_sample, counted in stalled_users.';
COMMENT ON INDEX activity_users_pkey IS
  'Whether a user is new to a day and version (one probe per check-in), and retention''s delete by (app_id, day).';

CREATE TABLE activity_daily (
  app_id bigint NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  active_users bigint NOT NULL DEFAULT 0 CHECK (active_users >= 0),
  sampled_users bigint NOT NULL DEFAULT 0 CHECK (sampled_users >= 0),
  stalled_users bigint NOT NULL DEFAULT 0 CHECK (stalled_users >= 0),
  reports bigint NOT NULL DEFAULT 0 CHECK (reports >= 0),
  stall_ms bigint NOT NULL DEFAULT 0 CHECK (stall_ms >= 0),
  PRIMARY KEY (app_id, day, app_version)
);
COMMENT ON TABLE activity_daily IS
  'Per app, UTC day and app version ('''' for reports without one): distinct active users (whitelisted included), sampled non-whitelisted users, those of them with a stored report, and the stored reports and their summed durations. GET .../stats reads it; kept through retention.';
COMMENT ON INDEX activity_daily_pkey IS
  'The stats route''s range scan by (app_id, day), and the one row a batch adds to per day and version.';
