-- 050_android_measures.sql — Android startup and frame measurements
-- (issue 44, SPEC §13: Matrix's Trace_StartUp and Trace_FPS elements feed
-- GET …/startup and GET …/frames; docs/STORAGE.md "Measurements").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why aggregates only: a startup or an fps sample is not a stall, has no
-- stack and is never shown alone; Matrix sends one per startup and one per
-- scene every 10 s, so keeping them as reports would cost a partition row,
-- a group and a delta each for figures read only as sums. Each element
-- adds to one row per (app, UTC day received, version, cold/warm) or
-- (…, scene), and its key to measure_keys, in one statement
-- (store/measures.c): a resent element finds its key and adds nothing.
--
-- Not partitioned: the aggregate rows are few (versions × scenes per
-- day), and measure_keys is as report_keys, one row per element, unique
-- across days so a resend on a later day is still known; the purge
-- deletes the three tables' rows of days before the cutoff (store/reports.c
-- st_reports_purge). No foreign key to apps, as for report_keys
-- (schema/005): every element would lock the app's row.

CREATE TABLE measure_keys (
  app_id bigint NOT NULL,
  key text NOT NULL,
  day date NOT NULL,
  PRIMARY KEY (app_id, key)
);
COMMENT ON TABLE measure_keys IS
  'The idempotency key of every counted Matrix measurement (Trace_StartUp, Trace_FPS): an element whose key is here was added to startup_days or frame_days already, and a resend adds nothing. Deleted with its day by the purge.';
COMMENT ON COLUMN measure_keys.app_id IS 'The app that received the element.';
COMMENT ON COLUMN measure_keys.key IS 'The element''s idempotency key, as a report''s report_id (the Matrix parser''s ing_measure.key).';
COMMENT ON COLUMN measure_keys.day IS 'The UTC day it was received: the day of the aggregate row it counts in.';
COMMENT ON INDEX measure_keys_pkey IS 'Idempotency: one count per element key and app, whatever day it is resent.';
CREATE INDEX measure_keys_day_idx ON measure_keys (app_id, day);
COMMENT ON INDEX measure_keys_day_idx IS 'Lets the purge delete an app''s keys of the days before its cutoff.';

CREATE TABLE startup_days (
  app_id bigint NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  warm boolean NOT NULL,
  startups bigint NOT NULL,
  startup_ms bigint NOT NULL,
  max_ms bigint NOT NULL,
  duration_fine integer[] NOT NULL,
  application_creates bigint NOT NULL,
  application_create_ms bigint NOT NULL,
  first_activity_creates bigint NOT NULL,
  first_activity_create_ms bigint NOT NULL,
  PRIMARY KEY (app_id, day, app_version, warm)
);
COMMENT ON TABLE startup_days IS
  'Android startups (Matrix Trace_StartUp) per app, UTC day received, app version and cold or warm: what GET …/startup reads (count, mean, max, p50/p90 from the fine histogram as the group replies).';
COMMENT ON COLUMN startup_days.app_id IS 'The app.';
COMMENT ON COLUMN startup_days.day IS 'The UTC day the startups were received.';
COMMENT ON COLUMN startup_days.app_version IS 'The envelope''s app_version; '''' when it had none.';
COMMENT ON COLUMN startup_days.warm IS 'is_warm_start_up: false for cold startups, true for warm ones.';
COMMENT ON COLUMN startup_days.startups IS 'Startups counted (each with a startup_duration).';
COMMENT ON COLUMN startup_days.startup_ms IS 'Their startup_duration summed, ms (the mean is startup_ms / startups).';
COMMENT ON COLUMN startup_days.max_ms IS 'The longest startup_duration, ms.';
COMMENT ON COLUMN startup_days.duration_fine IS
  'The startup_durations as a fine log-scale histogram (groups.duration_fine says the format: fine_hist_add, fine_percentiles).';
COMMENT ON COLUMN startup_days.application_creates IS 'Cold startups that carried application_create (0 on warm rows: Matrix sends 0 for warm).';
COMMENT ON COLUMN startup_days.application_create_ms IS 'Their application_create summed, ms.';
COMMENT ON COLUMN startup_days.first_activity_creates IS 'Cold startups that carried first_activity_create (0 on warm rows).';
COMMENT ON COLUMN startup_days.first_activity_create_ms IS 'Their first_activity_create summed, ms.';
COMMENT ON INDEX startup_days_pkey IS
  'One row per app, day, version and cold/warm: the upsert''s conflict target, and the reads'' range scan of an app''s days.';

CREATE TABLE frame_days (
  app_id bigint NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  scene text NOT NULL,
  elements bigint NOT NULL,
  frames_best bigint NOT NULL,
  frames_normal bigint NOT NULL,
  frames_middle bigint NOT NULL,
  frames_high bigint NOT NULL,
  frames_frozen bigint NOT NULL,
  dropped_best bigint NOT NULL,
  dropped_normal bigint NOT NULL,
  dropped_middle bigint NOT NULL,
  dropped_high bigint NOT NULL,
  dropped_frozen bigint NOT NULL,
  fps_sum double precision NOT NULL,
  fps_count bigint NOT NULL,
  PRIMARY KEY (app_id, day, app_version, scene)
);
COMMENT ON TABLE frame_days IS
  'Android frame drops (Matrix Trace_FPS) per app, UTC day received, app version and scene: what GET …/frames reads. Drop levels are Matrix''s (FrameTracer: dropped ≥ 42 frozen, ≥ 24 high, ≥ 9 middle, ≥ 3 normal, else best).';
COMMENT ON COLUMN frame_days.app_id IS 'The app.';
COMMENT ON COLUMN frame_days.day IS 'The UTC day the elements were received.';
COMMENT ON COLUMN frame_days.app_version IS 'The envelope''s app_version; '''' when it had none.';
COMMENT ON COLUMN frame_days.scene IS 'The element''s scene (an activity or fragment class); '''' when it had none.';
COMMENT ON COLUMN frame_days.elements IS 'Trace_FPS elements counted.';
COMMENT ON COLUMN frame_days.frames_best IS 'dropLevel.DROPPED_BEST summed: frames that dropped fewer than 3.';
COMMENT ON COLUMN frame_days.frames_normal IS 'dropLevel.DROPPED_NORMAL summed: frames that dropped 3 to 8.';
COMMENT ON COLUMN frame_days.frames_middle IS 'dropLevel.DROPPED_MIDDLE summed: frames that dropped 9 to 23.';
COMMENT ON COLUMN frame_days.frames_high IS 'dropLevel.DROPPED_HIGH summed: frames that dropped 24 to 41.';
COMMENT ON COLUMN frame_days.frames_frozen IS 'dropLevel.DROPPED_FROZEN summed: frames that dropped 42 or more.';
COMMENT ON COLUMN frame_days.dropped_best IS 'dropSum.DROPPED_BEST summed: the frames dropped by the best-level frames.';
COMMENT ON COLUMN frame_days.dropped_normal IS 'dropSum.DROPPED_NORMAL summed.';
COMMENT ON COLUMN frame_days.dropped_middle IS 'dropSum.DROPPED_MIDDLE summed.';
COMMENT ON COLUMN frame_days.dropped_high IS 'dropSum.DROPPED_HIGH summed.';
COMMENT ON COLUMN frame_days.dropped_frozen IS 'dropSum.DROPPED_FROZEN summed.';
COMMENT ON COLUMN frame_days.fps_sum IS 'The elements'' fps summed (the mean is fps_sum / fps_count).';
COMMENT ON COLUMN frame_days.fps_count IS 'Elements that carried an fps.';
COMMENT ON INDEX frame_days_pkey IS
  'One row per app, day, version and scene: the upsert''s conflict target, and the reads'' range scan of an app''s days.';
