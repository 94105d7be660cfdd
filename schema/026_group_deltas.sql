-- 026_group_deltas.sql — ingest writes one delta row per stored report;
-- folding moves the deltas into group_days, group_dim_days and
-- group_facet_days (docs/STORAGE.md "Deltas").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: upserting those three tables' rows inside ingest's transaction
-- (ten rows per report, 40% of the database's time of a batch) cost issue
-- 26 half its ingest rate (docs/PERFORMANCE.md, "Ingest after issues 25
-- and 26"). A delta is a plain insert, committed with its report; the
-- folder upserts a whole second of a hot group's reports as one row
-- update, outside the writer's transaction, and every read of those tables
-- folds first, so answers stay exact.

CREATE TABLE group_deltas (
  app_id bigint NOT NULL,
  report bigint NOT NULL,
  key1 text NOT NULL,
  key2 text NOT NULL,
  day date NOT NULL,
  at timestamptz NOT NULL,
  user_id text NOT NULL,
  app_version text NOT NULL,
  os_version text NOT NULL,
  device text NOT NULL,
  kind text NOT NULL,
  in_sample boolean NOT NULL,
  duration_ms bigint,
  PRIMARY KEY (app_id, report)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000);
COMMENT ON TABLE group_deltas IS
  'A stored report not yet counted in group_days, group_dim_days and group_facet_days: inserted by ingest_reports in the report''s transaction, deleted by fold_group_deltas as it counts it; reprocessing moves a report''s delta instead of the day rows while it waits. Vacuumed every 20,000 deletes: the table only ever holds the last seconds of reports.';
COMMENT ON INDEX group_deltas_pkey IS
  'One delta per report: a fold deletes an app''s by (app_id), reprocessing moves one by (app_id, report).';

-- The three tables' upkeep, as it now is.
COMMENT ON TABLE group_days IS
  'Per group (both levels), UTC day: reports, distinct users (hll, exact up to 1,024), first and last received_at, severity. Counted from ingest''s deltas by fold_group_deltas (schema/026), moved by move_report; kept through retention. Answers date ranges without filters and every per-day series.';
COMMENT ON TABLE group_facet_days IS
  'Per group (both levels), UTC day, dimension (version, os_version, device, kind) and value ('''' when none): stored reports, all users and the in-sample users (reports.in_sample) as hll, the latter''s cardinality (affected), first/last seen and severity. Counted from ingest''s deltas by fold_group_deltas (schema/026) after group_dim_days, moved by move_facet_days, recounted by recount_group_day; kept through retention. Answers lists, details and triage filtered by exactly one dimension, affected without a filter, first/last version and GET …/compare (docs/STORAGE.md "Facets").';

-- move_report takes the report's id (its delta), so the old one goes.
DROP FUNCTION IF EXISTS move_report(bigint, text, text, text, text, jsonb, jsonb, date,
                                    timestamptz, text, text, text, text, text, bigint);
