-- 025_group_facet_days.sql — group_version_days generalized to the four
-- filter dimensions: per group, day, dimension and value, everything a
-- group reply reads (docs/STORAGE.md "Facets").
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: a list filtered by one dimension summed group_dim_days, one row per
-- combination of version, OS version, device, kind and in_sample (~39 per
-- level-1 group and day at 1,000,000 reports): a scan of the whole table
-- for the page, ~72 sketches unioned per listed group. Per value of one
-- dimension a group-day has one row here (~18 per group and day for the
-- four dimensions), so one value over a day range is an index range, and
-- a listed group's users one sketch a day. Two or more dimension filters
-- still read group_dim_days (the combination is what it keeps).
-- group_version_days was this table's version rows with fewer columns; it
-- goes, its readers (affected, first/last version, GET …/compare) read
-- the dim = 'version' rows.

CREATE TABLE group_facet_days (
  app_id bigint NOT NULL,
  level smallint NOT NULL CHECK (level IN (1, 2)),
  key text NOT NULL,
  day date NOT NULL,
  dim text NOT NULL CHECK (dim IN ('device', 'kind', 'os_version', 'version')),
  value text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  users hll(12, 5, 1024, 0) NOT NULL,
  sample_users hll(12, 5, 1024, 0) NOT NULL,
  affected bigint NOT NULL CHECK (affected >= 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  stall_ms bigint NOT NULL DEFAULT 0,
  max_duration_ms bigint,
  duration_hist bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0}',
  PRIMARY KEY (app_id, level, key, day, dim, value)
) WITH (fillfactor = 80);
-- As every sketch (schema/016): incompressible, out of line when large.
ALTER TABLE group_facet_days ALTER COLUMN users SET STORAGE EXTERNAL;
ALTER TABLE group_facet_days ALTER COLUMN sample_users SET STORAGE EXTERNAL;
COMMENT ON TABLE group_facet_days IS
  'Per group (both levels), UTC day, dimension (version, os_version, device, kind) and value ('''' when none): stored reports, all users and the in-sample users (reports.in_sample) as hll, the latter''s cardinality (affected), first/last seen and severity. Upserted by ingest_reports after group_dim_days, moved by move_facet_days, recounted by recount_group_day; kept through retention. Answers lists, details and triage filtered by exactly one dimension, affected without a filter, first/last version and GET …/compare (docs/STORAGE.md "Facets").';
COMMENT ON COLUMN group_facet_days.sample_users IS
  'The in-sample users (reports.in_sample) of the row: affected user-days are per day this sketch''s cardinality (affected), summed.';
COMMENT ON INDEX group_facet_days_pkey IS
  'Upserts at ingest; a listed group''s users, severity, series, affected and versions by (app_id, level, key).';
CREATE INDEX group_facet_days_value_idx ON group_facet_days (app_id, level, dim, value, day);
COMMENT ON INDEX group_facet_days_value_idx IS
  'A list filtered by one dimension (the page''s sums per group) and GET …/compare (level 1, two versions): the rows of one value over a day range, whatever the groups.';

-- Every dimension's rows from group_dim_days' combinations.
INSERT INTO group_facet_days (app_id, level, key, day, dim, value, reports, users, sample_users,
                              affected, first_seen, last_seen, stall_ms, max_duration_ms,
                              duration_hist)
SELECT d.app_id, d.level, d.key, d.day, x.dim, x.value, sum(d.reports), hll_union_agg(d.users),
       coalesce(hll_union_agg(d.users) FILTER (WHERE d.in_sample), hll_empty(12, 5, 1024, 0)),
       coalesce(hll_cardinality(hll_union_agg(d.users) FILTER (WHERE d.in_sample)), 0)::bigint,
       min(d.first_seen), max(d.last_seen), sum(d.stall_ms), max(d.max_duration_ms),
       ARRAY[sum(d.duration_hist[1]), sum(d.duration_hist[2]), sum(d.duration_hist[3]),
             sum(d.duration_hist[4]), sum(d.duration_hist[5]), sum(d.duration_hist[6]),
             sum(d.duration_hist[7]), sum(d.duration_hist[8])]::bigint[]
  FROM group_dim_days d,
       LATERAL (VALUES ('version', d.app_version), ('os_version', d.os_version),
                       ('device', d.device), ('kind', d.kind)) AS x(dim, value)
 WHERE d.reports > 0
 GROUP BY 1, 2, 3, 4, 5, 6;
-- The version rows keep group_version_days' in-sample users as they were
-- kept (both tables are written together, so it has no row the dimension
-- rows lack).
UPDATE group_facet_days f SET sample_users = v.users, affected = v.affected
  FROM group_version_days v
 WHERE f.app_id = v.app_id AND f.level = v.level AND f.key = v.key AND f.day = v.day
   AND f.dim = 'version' AND f.value = v.app_version;
DROP TABLE group_version_days;
-- Its mover, replaced by move_facet_days (one read for the four dimensions);
-- only the function files made it (IF EXISTS: a fresh database has none yet).
DROP FUNCTION IF EXISTS move_version_day(bigint, smallint, text, text, text, date, timestamptz, text, text);
-- A group's triage members are read per page (groups_triage, one
-- statement for the listed keys) instead of per group; only the function
-- files made the old one.
DROP FUNCTION IF EXISTS group_triage(bigint, smallint, text, date, date, text, text, text, text,
                                     text);

-- Statistics now, for the rows built above: the lists' first reads after
-- the upgrade would otherwise be planned for an empty table until
-- autovacuum comes by.
ANALYZE group_facet_days;
