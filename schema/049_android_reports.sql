-- 049_android_reports.sql — Android reports and their method mappings
-- (issue 44, SPEC §13; docs/ANDROID.md).
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: Matrix TraceCanary's reports have kinds of their own, and their
-- stacks are method ids that only the method mapping of the same build
-- names. A mapping is kept as a debug file: its rows have kind
-- 'method_mapping', arch 'java' and the UUID ingest/matrix.c derives from
-- (app version, build), so reports wait for it, the reprocessor moves them
-- when it arrives and dsyms/missing counts them exactly as for a dSYM.
ALTER TABLE reports DROP CONSTRAINT reports_kind_check;
ALTER TABLE reports ADD CONSTRAINT reports_kind_check CHECK (kind IN (
  'stall', 'hang', 'cpu', 'crash',
  'slow_method', 'anr', 'lag', 'slow_startup', 'thread_policy'));
COMMENT ON CONSTRAINT reports_kind_check ON reports IS
  'iOS kinds (stall, hang, cpu, crash) and Android''s (Matrix Trace_EvilMethod details, SPEC §13).';

ALTER TABLE debug_files ADD COLUMN app_version text, ADD COLUMN build text,
  ADD COLUMN content_hash text;
COMMENT ON COLUMN debug_files.app_version IS
  'A method mapping (kind method_mapping): the app version it was built for; NULL for a Mach-O slice.';
COMMENT ON COLUMN debug_files.build IS
  'A method mapping: the build it was made by (Matrix numbers methods anew in every build); NULL for a Mach-O slice.';
COMMENT ON COLUMN debug_files.content_hash IS
  'A method mapping: XXH3-128 of its text (hex), so a second upload of the same text changes nothing; NULL for a Mach-O slice.';
