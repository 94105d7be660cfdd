-- 016_day_aggregates.sql — per group and day aggregates with distinct
-- users as HyperLogLog sketches, in place of group_daily's row per report.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: group_daily (013) held one row per report and user, so every list
-- with a range or a filter counted distinct user_id over report-level rows
-- (470,000 buffers for one unfiltered list at a million reports, sorts
-- spilling to disk for the filtered ones: issue 25). Now:
--   * group_days: per (app, level, key, day) the reports, the users as an
--     hll, first and last seen — unfiltered date ranges and every per-day
--     series;
--   * group_dim_days: the same per (app, level, key, day, app version, OS
--     version, device, kind) — filtered lists and details;
--   * groups.users_hll: the group's all-time users; groups.users stays a
--     bigint kept equal to its cardinality, so sort=users is an index read.
-- Both levels get their own rows (a level-1 row is not the sum of its
-- level-2 rows for users: a user in two subgroups counts once).
--
-- The sketch: hll(12, 5, 1024, 0). log2m 12 (4,096 registers) gives a
-- standard error of 1.04/sqrt(4096) = 1.6%, inside SPEC §7's 2%; regwidth
-- 5 counts far beyond any user base. expthresh 1024: up to 1,024 distinct
-- users the sketch is the explicit set of their 64-bit hashes, so counts
-- are exact there (SPEC: exact up to 1,000); sparse mode is off (it is an
-- estimate, and smaller than explicit only between explicit and full).
-- Sizes: 8 bytes per user while explicit (up to 8 KB), 2,563 bytes once
-- full. The column's storage is EXTERNAL: hashes and registers do not
-- compress, so trying pglz at each rewrite of a hot row would only cost
-- CPU; a large sketch goes out of line and the heap row stays small, so
-- with fillfactor 80 updates of a hot row stay HOT (no index entry: the
-- indexed columns never change).
--
-- A sketch cannot remove a user: reprocessing recomputes the moved
-- report's old rows of that day from the reports kept for it (the moved
-- report is one, so its day is kept) and the old groups' all-time sketch
-- as the union of their group_days rows (schema/functions/move_report.sql).
-- Retention drops report partitions and keeps these rows, as before.
--
-- hll is not a trusted extension: a superuser creates it (scripts/pg.sh
-- createdb and start, docker/initdb), in public, where the role can
-- create nothing, on the role's search_path after its own schema.

DO $$
BEGIN
  IF to_regtype('hll') IS NULL THEN
    RAISE EXCEPTION '016_day_aggregates.sql needs the PostgreSQL extension hll, missing from this database: install the package postgresql-15-hll (scripts/install-deps.sh), then as a superuser: CREATE EXTENSION hll SCHEMA public; and ALTER ROLE % SET search_path = %, public; (scripts/pg.sh does both)',
      current_user, current_schema();
  END IF;
END $$;

CREATE TABLE group_days (
  app_id bigint NOT NULL,
  level smallint NOT NULL CHECK (level IN (1, 2)),
  key text NOT NULL,
  day date NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  users hll(12, 5, 1024, 0) NOT NULL,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (app_id, level, key, day)
) WITH (fillfactor = 80);
ALTER TABLE group_days ALTER COLUMN users SET STORAGE EXTERNAL;
COMMENT ON TABLE group_days IS
  'Per group (both levels), UTC day: reports, distinct users (hll, exact up to 1,024), first and last received_at. Upserted by ingest_reports in the report''s transaction, moved by move_report; kept through retention. Answers date ranges without filters and every per-day series.';
COMMENT ON INDEX group_days_pkey IS
  'Upserts at ingest; a group''s per-day series and users by (app_id, level, key).';
CREATE INDEX group_days_day_idx ON group_days (app_id, level, day);
COMMENT ON INDEX group_days_day_idx IS 'The group list over a date range: the days'' rows only.';

CREATE TABLE group_dim_days (
  app_id bigint NOT NULL,
  level smallint NOT NULL CHECK (level IN (1, 2)),
  key text NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  os_version text NOT NULL,
  device text NOT NULL,
  kind text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  users hll(12, 5, 1024, 0) NOT NULL,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (app_id, level, key, day, app_version, os_version, device, kind)
) WITH (fillfactor = 80);
ALTER TABLE group_dim_days ALTER COLUMN users SET STORAGE EXTERNAL;
COMMENT ON TABLE group_dim_days IS
  'group_days split by app version, OS version, device and kind ('''' when a report had none): the lists and details under a filter sum these. Same upkeep as group_days.';
COMMENT ON INDEX group_dim_days_pkey IS
  'Upserts at ingest; a group''s filtered detail and series by (app_id, level, key).';
CREATE INDEX group_dim_days_day_idx ON group_dim_days (app_id, level, day);
COMMENT ON INDEX group_dim_days_day_idx IS 'The filtered group list over a date range.';

INSERT INTO group_dim_days (app_id, level, key, day, app_version, os_version, device, kind,
                            reports, users, first_seen, last_seen)
SELECT d.app_id, l.level, CASE l.level WHEN 1 THEN d.key1 ELSE d.key2 END, d.day,
       d.app_version, d.os_version, d.device, d.kind, sum(d.reports),
       hll_add_agg(hll_hash_text(d.user_id), 12, 5, 1024, 0), min(d.first_seen),
       max(d.last_seen)
  FROM group_daily d, (VALUES (1::smallint), (2::smallint)) AS l(level)
 WHERE d.reports > 0
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
INSERT INTO group_days (app_id, level, key, day, reports, users, first_seen, last_seen)
SELECT app_id, level, key, day, sum(reports), hll_union_agg(users), min(first_seen),
       max(last_seen)
  FROM group_dim_days GROUP BY 1, 2, 3, 4;

ALTER TABLE groups ADD COLUMN users_hll hll(12, 5, 1024, 0);
ALTER TABLE groups ALTER COLUMN users_hll SET STORAGE EXTERNAL;
UPDATE groups g SET users_hll = coalesce((SELECT hll_union_agg(d.users) FROM group_days d
                                           WHERE d.app_id = g.app_id AND d.level = g.level
                                             AND d.key = g.key),
                                          hll_empty(12, 5, 1024, 0));
UPDATE groups SET users = hll_cardinality(users_hll)::bigint;
ALTER TABLE groups ALTER COLUMN users_hll SET NOT NULL;
COMMENT ON COLUMN groups.users_hll IS
  'The group''s distinct users of all time (hll as in group_days); users is its cardinality, kept beside it for sort=users.';

DROP TABLE group_daily;
DROP FUNCTION count_out_of_group(bigint, smallint, text, integer);
DROP FUNCTION count_into_group(bigint, smallint, text, text, jsonb, timestamptz, integer);

CREATE TABLE group_day_recounts (
  app_id bigint NOT NULL,
  level smallint NOT NULL,
  key text NOT NULL,
  day date NOT NULL,
  key1 text NOT NULL,
  PRIMARY KEY (app_id, level, key, day)
);
COMMENT ON TABLE group_day_recounts IS
  'Day rows of a group whose users, first and last seen wait to be recounted from the kept reports (recount_group_day): reprocessing moved reports out of a group-day too big to recount at every move (move_day_row), which would read the group-day''s reports once per moved report, n² in all. Until then the rows'' reports are exact and their users and bounds an upper bound.';
COMMENT ON INDEX group_day_recounts_pkey IS
  'One row per group-day however many reports moved out of it; key1 finds a level-2 group''s reports.';
