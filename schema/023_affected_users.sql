-- 023_affected_users.sql — which stored reports are in the sample, so a
-- group's affected user-days and rate (SPEC §10.2) and the release
-- comparison (§10.3) come from group_dim_days.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: a group's affected count is its distinct (user, day) pairs among
-- sampled, non-whitelisted users, and its rate divides it by
-- activity_daily.sampled_users of the same days and version. Whitelisted
-- users always upload, so they are not a random sample and must be left
-- out of the numerator as they are of the denominator. Whether a user was
-- whitelisted is decided at the report's time (ingest_reports' listed);
-- the whitelist changes later, so the answer is kept with the report:
--   * reports.in_sample: the report's user was not whitelisted when it was
--     stored (then it was sampled: nothing else is stored). Reprocessing
--     recounts a group-day's rows from the kept reports and needs it.
--   * group_dim_days.in_sample, in the row's key: the sampled users' sketch
--     apart from the whitelisted users'. Whitelisted users are few, so
--     few rows are added; the lists keep summing every row. Read under an
--     OS version, device or kind filter only:
--   * group_version_days (below): per group, day and version, the
--     in-sample users and their count, which everything else reads.
-- Affected per day is the cardinality of the union of that day's matching
-- in_sample rows' sketches (exact up to 1,024 users a day, schema/016),
-- summed over the days.
--
-- Existing reports: whether their user was whitelisted when they were
-- stored was not kept. Taken from the whitelist as it is now: a report is
-- out of the sample when an entry of its user was created at or before
-- it and had not expired then. An entry deleted since is forgotten (its
-- reports count as sampled), and one replaced keeps its created_at. Rows
-- of days whose reports retention dropped cannot be split and stay in the
-- sample (whitelisted users are few; their days predate check-ins, so no
-- rate has a denominator there anyway, schema/019).

ALTER TABLE reports ADD COLUMN in_sample boolean NOT NULL DEFAULT true;
UPDATE reports r SET in_sample = false
 WHERE EXISTS (SELECT 1 FROM whitelist w
                WHERE w.app_id = r.app_id AND w.user_id = r.user_id
                  AND w.created_at <= r.received_at
                  AND (w.expires_at IS NULL OR w.expires_at > r.received_at));
-- Every insert says it (ingest_reports); the rows above keep their value.
ALTER TABLE reports ALTER COLUMN in_sample DROP DEFAULT;
COMMENT ON COLUMN reports.in_sample IS
  'The user was not whitelisted when the report was stored (so sampled that day): counted in group_dim_days'' in_sample rows, the affected users of SPEC §10.2.';

ALTER TABLE group_dim_days ADD COLUMN in_sample boolean NOT NULL DEFAULT true;
ALTER TABLE group_dim_days DROP CONSTRAINT group_dim_days_pkey;
ALTER TABLE group_dim_days
  ADD PRIMARY KEY (app_id, level, key, day, app_version, os_version, device, kind, in_sample);
ALTER TABLE group_dim_days ALTER COLUMN in_sample DROP DEFAULT;
COMMENT ON COLUMN group_dim_days.in_sample IS
  'The row''s reports are in the sample (reports.in_sample): a group''s affected user-days are the union of these rows'' users per day.';
COMMENT ON INDEX group_dim_days_pkey IS
  'Upserts at ingest; a group''s filtered detail, series and affected users by (app_id, level, key).';

-- The kept group-days a whitelisted user's report fell in: their rows
-- made anew from the reports, split by in_sample. (A table of this
-- transaction only: the role may not create temporary ones.)
CREATE TABLE listed_rows AS
SELECT DISTINCT r.app_id, l.level, CASE l.level WHEN 1 THEN r.key1 ELSE r.key2 END AS key,
       r.received_day AS day, coalesce(r.app_version, '') AS app_version,
       coalesce(r.os_version, '') AS os_version, coalesce(r.device, '') AS device, r.kind
  FROM reports r, (VALUES (1::smallint), (2::smallint)) AS l(level)
 WHERE NOT r.in_sample;
DELETE FROM group_dim_days d USING listed_rows x
 WHERE d.app_id = x.app_id AND d.level = x.level AND d.key = x.key AND d.day = x.day
   AND d.app_version = x.app_version AND d.os_version = x.os_version
   AND d.device = x.device AND d.kind = x.kind;
-- The rows' durations (schema/021) split the same way, counted as 021
-- counts them (count_durations is applied only after the migrations).
INSERT INTO group_dim_days (app_id, level, key, day, app_version, os_version, device, kind,
                            in_sample, reports, users, first_seen, last_seen, stall_ms,
                            max_duration_ms, duration_hist)
SELECT x.app_id, x.level, x.key, x.day, x.app_version, x.os_version, x.device, x.kind,
       r.in_sample, count(*), hll_add_agg(hll_hash_text(r.user_id), 12, 5, 1024, 0),
       min(r.received_at), max(r.received_at),
       coalesce(sum(r.duration_ms) FILTER (WHERE r.duration_ms >= 0), 0),
       max(r.duration_ms) FILTER (WHERE r.duration_ms >= 0),
       ARRAY[count(*) FILTER (WHERE b.b = 1), count(*) FILTER (WHERE b.b = 2),
             count(*) FILTER (WHERE b.b = 3), count(*) FILTER (WHERE b.b = 4),
             count(*) FILTER (WHERE b.b = 5), count(*) FILTER (WHERE b.b = 6),
             count(*) FILTER (WHERE b.b = 7), count(*) FILTER (WHERE b.b = 8)]
  FROM listed_rows x
  JOIN reports r ON r.app_id = x.app_id AND r.received_day = x.day
   AND (CASE x.level WHEN 1 THEN r.key1 ELSE r.key2 END) = x.key
   AND coalesce(r.app_version, '') = x.app_version
   AND coalesce(r.os_version, '') = x.os_version AND coalesce(r.device, '') = x.device
   AND r.kind = x.kind,
       LATERAL (SELECT width_bucket(r.duration_ms, ARRAY[0, 250, 500, 1000, 2000, 5000,
                                                         10000, 30000]::bigint[]) AS b) AS b
 GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9;
DROP TABLE listed_rows;

-- Per group, day and app version: every stored report, and the sampled,
-- non-whitelisted users as a sketch with its cardinality beside it. The
-- group rows' affected and rate without an OS, device or kind filter, a
-- group's versions, and the release comparison read these: a handful of
-- rows per group and day (one per version) instead of group_dim_days'
-- hundreds, and the comparison reads no sketch at all (affected).
CREATE TABLE group_version_days (
  app_id bigint NOT NULL,
  level smallint NOT NULL CHECK (level IN (1, 2)),
  key text NOT NULL,
  day date NOT NULL,
  app_version text NOT NULL,
  reports bigint NOT NULL CHECK (reports >= 0),
  affected bigint NOT NULL CHECK (affected >= 0),
  users hll(12, 5, 1024, 0) NOT NULL,
  PRIMARY KEY (app_id, level, key, day, app_version)
) WITH (fillfactor = 80);
ALTER TABLE group_version_days ALTER COLUMN users SET STORAGE EXTERNAL;
COMMENT ON TABLE group_version_days IS
  'Per group (both levels), UTC day and app version ('''' when none): stored reports (whitelisted users'' included), the in-sample users (reports.in_sample) as an hll and its cardinality (affected). Upserted by ingest_reports after group_dim_days, moved by move_report, recounted by recount_group_day; kept through retention. Answers affected and rate without a dimension filter, first/last version and GET …/compare (docs/TRIAGE.md).';
COMMENT ON INDEX group_version_days_pkey IS
  'Upserts at ingest; a group''s affected users and versions by (app_id, level, key).';
CREATE INDEX group_version_days_version_idx
  ON group_version_days (app_id, app_version, level, day);
COMMENT ON INDEX group_version_days_version_idx IS
  'GET …/compare: the level-1 rows of one app version over a day range, whatever the groups.';
INSERT INTO group_version_days (app_id, level, key, day, app_version, reports, affected, users)
SELECT app_id, level, key, day, app_version, sum(reports),
       coalesce(hll_cardinality(hll_union_agg(users) FILTER (WHERE in_sample)), 0)::bigint,
       coalesce(hll_union_agg(users) FILTER (WHERE in_sample), hll_empty(12, 5, 1024, 0))
  FROM group_dim_days GROUP BY 1, 2, 3, 4, 5;
