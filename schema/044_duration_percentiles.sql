-- 044 — durations people can read: p50, p90 and p99 per group under
-- every filter (SPEC §10.1).
--
-- The 8 display buckets (schema/021) say "10–30 s", not a percentile. A
-- fine log-scale histogram beside them, duration_fine, in the same four
-- tables and kept by the same writers (the fold, reprocessing's moves),
-- gives any percentile within 2% (plus the rounding to a whole ms),
-- mergeable across days and dimensions like the counts, and exact under
-- subtraction (a moved report leaves its bucket), which a t-digest is
-- not. Sparse (bucket, count) pairs (fine_hist_add says the format): a
-- row of one or two durations costs 8 or 16 bytes; as for duration_hist
-- (schema/034), a group_dim_days or group_facet_days row of at most one
-- duration keeps none (its max_duration_ms is that duration).
--
-- Upgrade: every row is computed from the stored reports it counts (not
-- those whose delta still waits: the fold counts them). A row whose day
-- retention already dropped keeps its counts and gets an empty histogram:
-- its durations are gone, so percentiles over it leave them out.

ALTER TABLE groups ADD COLUMN duration_fine integer[];
ALTER TABLE group_days ADD COLUMN duration_fine integer[];
ALTER TABLE group_dim_days ADD COLUMN duration_fine integer[];
ALTER TABLE group_facet_days ADD COLUMN duration_fine integer[];
COMMENT ON COLUMN groups.duration_fine IS
  'The group''s durations as a fine log-scale histogram: (bucket, count) pairs by bucket, bucket k holding (1.04^(k-1), 1.04^k] ms (fine_bucket). p50/p90/p99 are read from it (fine_percentiles).';
COMMENT ON COLUMN group_days.duration_fine IS
  'The row''s durations as a fine histogram (groups.duration_fine says the format).';
COMMENT ON COLUMN group_dim_days.duration_fine IS
  'The row''s durations as a fine histogram (groups.duration_fine says the format); NULL when it counts at most one duration, which is then its max_duration_ms (kept_fine_hist).';
COMMENT ON COLUMN group_facet_days.duration_fine IS
  'The row''s durations as a fine histogram (groups.duration_fine says the format); NULL when it counts at most one duration, which is then its max_duration_ms (kept_fine_hist).';

-- Each stored, folded report's bucket on both levels, with the values
-- the dimension and facet rows are keyed by.
-- (A table of the migration's own: the role may not create temporary ones.)
CREATE TABLE fine_of_reports AS
SELECT r.app_id, l.level, CASE l.level WHEN 1 THEN r.key1 ELSE r.key2 END AS key,
       r.received_day AS day, coalesce(r.app_version, '') AS app_version,
       coalesce(r.os_version, '') AS os_version, coalesce(r.device, '') AS device, r.kind,
       r.in_sample,
       CASE WHEN r.duration_ms <= 0 THEN -1
            ELSE ceil(ln(r.duration_ms::double precision) / ln(1.04))::integer END AS bucket
  FROM reports r, (VALUES (1::smallint), (2::smallint)) AS l(level)
 WHERE r.duration_ms IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM group_deltas g WHERE g.app_id = r.app_id AND g.report = r.id);

UPDATE group_days d SET duration_fine = f.fine
  FROM (SELECT app_id, level, key, day, array_agg(w.v ORDER BY s.bucket, w.k) AS fine
          FROM (SELECT app_id, level, key, day, bucket, count(*)::integer AS n
                  FROM fine_of_reports GROUP BY 1, 2, 3, 4, 5) s,
               LATERAL (VALUES (0, s.bucket), (1, s.n)) AS w(k, v)
         GROUP BY 1, 2, 3, 4) f
 WHERE d.app_id = f.app_id AND d.level = f.level AND d.key = f.key AND d.day = f.day;
UPDATE group_days SET duration_fine = '{}' WHERE duration_fine IS NULL;

UPDATE group_dim_days d SET duration_fine = f.fine
  FROM (SELECT s.app_id, s.level, s.key, s.day, c.id AS combo, s.in_sample,
               array_agg(w.v ORDER BY s.bucket, w.k) AS fine
          FROM (SELECT app_id, level, key, day, app_version, os_version, device, kind,
                       in_sample, bucket, count(*)::integer AS n
                  FROM fine_of_reports GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) s
          JOIN dim_combos c
            ON c.app_id = s.app_id AND c.app_version = s.app_version
           AND c.os_version = s.os_version AND c.device = s.device AND c.kind = s.kind,
               LATERAL (VALUES (0, s.bucket), (1, s.n)) AS w(k, v)
         GROUP BY 1, 2, 3, 4, 5, 6) f
 WHERE d.duration_hist IS NOT NULL AND d.app_id = f.app_id AND d.level = f.level
   AND d.key = f.key AND d.day = f.day AND d.combo = f.combo AND d.in_sample = f.in_sample;
UPDATE group_dim_days SET duration_fine = '{}'
 WHERE duration_fine IS NULL AND duration_hist IS NOT NULL;

UPDATE group_facet_days d SET duration_fine = f.fine
  FROM (SELECT s.app_id, s.level, s.key, s.day, s.dim, s.value,
               array_agg(w.v ORDER BY s.bucket, w.k) AS fine
          FROM (SELECT r.app_id, r.level, r.key, r.day, x.dim, x.value, r.bucket,
                       count(*)::integer AS n
                  FROM fine_of_reports r,
                       LATERAL (VALUES ('version', r.app_version), ('os_version', r.os_version),
                                       ('device', r.device), ('kind', r.kind)) AS x(dim, value)
                 GROUP BY 1, 2, 3, 4, 5, 6, 7) s,
               LATERAL (VALUES (0, s.bucket), (1, s.n)) AS w(k, v)
         GROUP BY 1, 2, 3, 4, 5, 6) f
 WHERE d.duration_hist IS NOT NULL AND d.app_id = f.app_id AND d.level = f.level
   AND d.key = f.key AND d.day = f.day AND d.dim = f.dim AND d.value = f.value;
UPDATE group_facet_days SET duration_fine = '{}'
 WHERE duration_fine IS NULL AND duration_hist IS NOT NULL;

-- A group's all-time histogram is the sum of its day rows', as its
-- other counters are.
UPDATE groups g SET duration_fine = f.fine
  FROM (SELECT app_id, level, key, array_agg(w.v ORDER BY s.bucket, w.k) AS fine
          FROM (SELECT d.app_id, d.level, d.key, d.duration_fine[i] AS bucket,
                       sum(d.duration_fine[i + 1])::integer AS n
                  FROM group_days d, generate_series(1, cardinality(d.duration_fine), 2) AS i
                 GROUP BY 1, 2, 3, 4) s,
               LATERAL (VALUES (0, s.bucket), (1, s.n)) AS w(k, v)
         GROUP BY 1, 2, 3) f
 WHERE g.app_id = f.app_id AND g.level = f.level AND g.key = f.key;
UPDATE groups SET duration_fine = '{}' WHERE duration_fine IS NULL;

DROP TABLE fine_of_reports;
