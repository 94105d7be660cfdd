-- 017_arrivals_and_image_waits.sql — reprocessing driven by the arrivals of
-- debug files, and dsyms/missing from a counter per app, image and day.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why (issue 25): the reprocessor looked every 5 s for waits a debug file
-- now answers by reading every report_waits row and probing debug_files
-- for each (0.85 s at 1.8 million waits, all day), and GET …/dsyms/missing
-- counted distinct reports over all of them. Now a stored debug file or
-- system symbol file leaves a row in debug_file_arrivals (and a NOTIFY) in
-- its own transaction; every server reads the arrivals after the last one
-- it saw and takes the waits of exactly those UUIDs through report_waits'
-- primary key. dsyms/missing reads image_waits, kept by the statements
-- that add and remove waits (ingest_reports, add_report_waits,
-- clear_report_waits, the purge). The image's name and arch, and the
-- wait's time, move from every wait to the counter: every report waits for
-- a system image, so they were paid once per report.

CREATE TABLE debug_file_arrivals (
  id bigserial PRIMARY KEY,
  app_id bigint,
  uuid uuid NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE debug_file_arrivals IS
  'A debug file of app_id (NULL: a system symbol file, for every app) with this UUID was stored, or a report was stored waiting for a UUID that had a file already: the reprocessors of every server read the rows after the last id they saw (woken by NOTIFY stallscope_arrivals, or at their interval, or after their listening connection came back) and move the reports waiting for the UUID. Rows older than a day are pruned.';
COMMENT ON INDEX debug_file_arrivals_pkey IS
  'Servers read the arrivals after the last id they saw; pruning takes the oldest first.';

CREATE TABLE image_waits (
  app_id bigint NOT NULL,
  uuid uuid NOT NULL,
  day date NOT NULL,
  reason text NOT NULL,
  image_name text,
  arch text,
  reports bigint NOT NULL CHECK (reports > 0),
  PRIMARY KEY (app_id, uuid, day, reason)
);
COMMENT ON TABLE image_waits IS
  'How many reports of an app received on a day wait for an image (UUID) for one reason, with the greatest image name and arch they listed it under: what GET …/dsyms/missing ranks, without reading report_waits. Kept in the transactions that add and remove waits; a row goes when its last wait goes, and the purge deletes the rows of the days it drops.';
COMMENT ON INDEX image_waits_pkey IS
  'One counter per app, image, day and reason: dsyms/missing reads an app''s rows, the purge an app''s days.';

INSERT INTO image_waits (app_id, uuid, day, reason, image_name, arch, reports)
SELECT app_id, uuid, received_day, reason, max(image_name), max(arch), count(*)
  FROM report_waits GROUP BY 1, 2, 3, 4;

-- report_waits without the columns the counter holds now, rewritten so
-- the old rows' bytes go too (a dropped column stays in every row).
ALTER TABLE report_waits RENAME TO report_waits_before_017;
ALTER INDEX report_waits_pkey RENAME TO report_waits_before_017_pkey;
ALTER INDEX report_waits_report_idx RENAME TO report_waits_before_017_report_idx;
ALTER TABLE report_waits_before_017
  RENAME CONSTRAINT report_waits_reason_check TO report_waits_before_017_reason_check;
CREATE TABLE report_waits (
  app_id bigint NOT NULL,
  uuid uuid NOT NULL,
  report bigint NOT NULL,
  received_day date NOT NULL,
  reason text NOT NULL CONSTRAINT report_waits_reason_check
    CHECK (reason IN ('missing', 'malformed', 'symbol_table', 'system_missing',
                      'system_malformed')),
  PRIMARY KEY (app_id, uuid, report)
);
INSERT INTO report_waits (app_id, uuid, report, received_day, reason)
SELECT app_id, uuid, report, received_day, reason FROM report_waits_before_017
 ORDER BY app_id, uuid, report;
DROP TABLE report_waits_before_017;
CREATE INDEX report_waits_report_idx ON report_waits (report);
COMMENT ON TABLE report_waits IS
  'Which reports are waiting for a better debug file of which image: none uploaded (missing), unreadable (malformed), or only a symbol table so far; for a system image (ingest/image_class.c) none in the app''s uploads nor the system symbols (system_missing) or unreadable (system_malformed). An arrival of that UUID (debug_file_arrivals) makes the reprocessor symbolize those reports again and move them to their real groups; image_waits counts them for dsyms/missing. Only the app''s own reasons make a report pending.';
COMMENT ON INDEX report_waits_pkey IS
  'Finds the reports an arrived UUID unblocks, in report order (keyset batches).';
COMMENT ON INDEX report_waits_report_idx IS
  'Clears a report''s waits when it is reprocessed or purged; the reprocessor''s bounded sweep walks the waiting reports in id order.';
