-- 015_filtered_aggregates.sql — first and last seen per group_daily row,
-- and app_dimensions: the app's versions, OS versions, devices and kinds
-- per day.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: with a date range or a filter, a group's first/last seen were the
-- group's all-time ones (groups.first_seen/last_seen), and the dashboard's
-- filters had no list of values to pick from. Both are answered from
-- aggregates kept at ingest (SPEC §8): group_daily rows now carry the
-- first and last received_at of their reports, and app_dimensions holds
-- one counter per app, day, dimension and value. ingest_reports writes
-- both in the statement that already writes group_daily (one more small
-- upsert per batch: a handful of rows, one per distinct day, dimension and
-- value); move_report keeps the moved row's bounds exact (both in
-- schema/functions/, applied after this). app_dimensions does not depend
-- on groups, so reprocessing leaves it alone; like group_daily it keeps
-- its history through retention.

ALTER TABLE group_daily ADD COLUMN first_seen timestamptz, ADD COLUMN last_seen timestamptz;
-- From the stored reports where their day is still kept...
UPDATE group_daily d SET first_seen = r.first_seen, last_seen = r.last_seen
  FROM (SELECT app_id, key1, user_id, key2, received_day AS day,
               coalesce(app_version, '') AS app_version,
               coalesce(os_version, '') AS os_version, coalesce(device, '') AS device, kind,
               min(received_at) AS first_seen, max(received_at) AS last_seen
          FROM reports GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9) AS r
 WHERE d.app_id = r.app_id AND d.key1 = r.key1 AND d.user_id = r.user_id
   AND d.key2 = r.key2 AND d.day = r.day AND d.app_version = r.app_version
   AND d.os_version = r.os_version AND d.device = r.device AND d.kind = r.kind;
-- ...else (retention dropped the day) the day's bounds narrowed to the
-- level-2 group's first and last seen: the closest the kept counters say.
UPDATE group_daily d
   SET first_seen = least(greatest(d.day::timestamp AT TIME ZONE 'UTC',
                                   coalesce((SELECT g.first_seen FROM groups g
                                              WHERE g.app_id = d.app_id AND g.level = 2
                                                AND g.key = d.key2), '-infinity')),
                          (d.day + 1)::timestamp AT TIME ZONE 'UTC' - interval '1 microsecond'),
       last_seen = greatest(least((d.day + 1)::timestamp AT TIME ZONE 'UTC'
                                  - interval '1 microsecond',
                                  coalesce((SELECT g.last_seen FROM groups g
                                             WHERE g.app_id = d.app_id AND g.level = 2
                                               AND g.key = d.key2), 'infinity')),
                            d.day::timestamp AT TIME ZONE 'UTC')
 WHERE d.first_seen IS NULL;
ALTER TABLE group_daily ALTER COLUMN first_seen SET NOT NULL,
                        ALTER COLUMN last_seen SET NOT NULL;
COMMENT ON COLUMN group_daily.first_seen IS
  'received_at of the row''s first report: a group''s first seen under a date range or filter is the least of its matching rows''.';
COMMENT ON COLUMN group_daily.last_seen IS
  'received_at of the row''s last report (see first_seen).';

CREATE TABLE app_dimensions (
  app_id bigint NOT NULL,
  day date NOT NULL,
  dim text NOT NULL CHECK (dim IN ('version', 'os_version', 'device', 'kind')),
  value text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  PRIMARY KEY (app_id, day, dim, value)
);
COMMENT ON TABLE app_dimensions IS
  'Reports received per app, UTC day and value of each filter dimension (app version, OS version, device, kind; '''' when the report had none), with the first and last received_at: the dashboard''s filter pick lists (GET …/dimensions) sum a day range of these. Written by ingest_reports, untouched by reprocessing (it moves reports between groups, not between values), kept forever like group_daily.';
COMMENT ON INDEX app_dimensions_pkey IS
  'One counter per app, day, dimension and value, upserted at ingest; (app_id, day) prefixes read a date range.';
INSERT INTO app_dimensions (app_id, day, dim, value, reports, first_seen, last_seen)
SELECT d.app_id, d.day, x.dim, x.value, sum(d.reports), min(d.first_seen), max(d.last_seen)
  FROM group_daily d,
       LATERAL (VALUES ('version', d.app_version), ('os_version', d.os_version),
                       ('device', d.device), ('kind', d.kind)) AS x(dim, value)
 WHERE d.reports > 0
 GROUP BY 1, 2, 3, 4;
