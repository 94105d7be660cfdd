-- 014_system_symbols.sql — an instance-wide store of system symbols, and
-- reports waiting for system images apart from the app's own.
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Every iOS stack runs through system images (UIKitCore, libsystem_*,
-- …) whose debug files no app team has; an operator loads them once for
-- every app (`stallscope system-symbols import DIR`). A report's waits for
-- such images take the reasons system_missing / system_malformed: they
-- still make the reprocessor move the report when the system symbols
-- arrive, but they do not make the report pending, and GET …/dsyms/missing
-- lists them apart (?images=system). Waits stored before this migration
-- keep their reasons until the report is reprocessed.

BEGIN;

CREATE TABLE system_symbols (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  uuid uuid NOT NULL,
  arch text NOT NULL,
  name text NOT NULL,
  kind text NOT NULL,
  has_dwarf boolean NOT NULL,
  functions bigint NOT NULL CHECK (functions >= 0),
  file_size bigint NOT NULL CHECK (file_size >= 0),
  symcache_size bigint NOT NULL CHECK (symcache_size >= 0),
  symcache_version integer NOT NULL,
  symcache_path text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT system_symbols_slice_key UNIQUE (uuid, arch)
);
COMMENT ON TABLE system_symbols IS
  'One row per Mach-O slice (LC_UUID + arch) of the system images an operator imported for the whole instance (stallscope system-symbols import): extracted OS frameworks, usually with a symbol table only. Only the symcache is kept (symcache_path, relative to the data dir); the operator keeps the source tree. Every app''s reports use these, after the app''s own debug_files for the same UUID.';
COMMENT ON INDEX system_symbols_pkey IS
  'Keyset pagination of stallscope system-symbols list.';
COMMENT ON INDEX system_symbols_slice_key IS
  'Symbolication finds the system symbols of an image by UUID (and arch); a second import of the same slice is idempotent.';

ALTER TABLE report_waits DROP CONSTRAINT report_waits_reason_check;
ALTER TABLE report_waits ADD CONSTRAINT report_waits_reason_check
  CHECK (reason IN ('missing', 'malformed', 'symbol_table', 'system_missing',
                    'system_malformed'));
COMMENT ON TABLE report_waits IS
  'Which reports are waiting for a better debug file of which image: none uploaded (missing), unreadable (malformed), or only a symbol table so far; for a system image (ingest/image_class.c) none in the app''s uploads nor the system symbols (system_missing) or unreadable (system_malformed). A debug file or system symbol of that UUID makes the reprocessor symbolize those reports again and move them to their real groups; GET …/dsyms/missing ranks the missing ones, the app''s and the system''s apart. Only the app''s own reasons make a report pending.';

COMMIT;
