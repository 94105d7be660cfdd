-- keep_stacks — the stacks stored reports refer to, each kept until the
-- last day one of them is dropped (schema/041, docs/STORAGE.md "Stacks").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- Called by ingest_reports and update_report_symbols, the last thing each
-- transaction locks. A stack stored with a last day as late as the
-- reference's is only read (one probe): nearly every stack of every
-- batch, so a popular stack is neither locked nor rewritten. Otherwise
-- the upsert inserts it or raises its day, locking it in hash order.
-- Against retention (drop_report_partitions deletes the stacks whose last
-- day is before the first it keeps): a stack read here with a day as late
-- as a report's is deleted only with that report's day, whose DROP waits
-- for this transaction; one whose deletion this upsert meets waits for it
-- and, once it is committed, inserts the stack anew; one whose raised day
-- retention meets is kept (its DELETE rechecks the day on the row this
-- upsert wrote).

CREATE OR REPLACE FUNCTION keep_stacks(p_app bigint, p_hashes uuid[], p_days date[],
                                       p_known_hashes uuid[], p_known_bodies text[])
RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stacks AS s (app_id, hash, body, last_day)
  SELECT p_app, x.h, p_known_bodies[array_position(p_known_hashes, x.h)], x.day
    FROM (SELECT h, max(d) AS day FROM unnest(p_hashes, p_days) AS u(h, d) GROUP BY h) x
   WHERE (SELECT true FROM stacks t
           WHERE t.app_id = p_app AND t.hash = x.h AND t.last_day >= x.day) IS NULL
   ORDER BY x.h
  ON CONFLICT (app_id, hash) DO UPDATE SET last_day = excluded.last_day
   WHERE s.last_day < excluded.last_day;
END $$;
COMMENT ON FUNCTION keep_stacks(bigint, uuid[], date[], uuid[], text[]) IS
  'Stores each stack p_hashes[i] referred to on day p_days[i] (repeats allowed): inserted with its text from p_known_hashes/p_known_bodies when new, its last_day raised to the latest of those days when earlier, only read otherwise.';
