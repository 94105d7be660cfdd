-- move_report — reprocessing: one report moved to its new groups
-- (docs/STORAGE.md "Reprocessing").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- It keeps ingest_reports' (and fold_group_deltas') order of row locks:
-- the user; the report's delta, while it waits (schema/026); the groups
-- rows, level 1's two in key order, then level 2's; their group_days rows
-- in the same order; their group_dim_days rows; their group_facet_days
-- rows (schema/025). A level whose key does not change keeps its rows as
-- they are. While the delta waits, the report is in no counter yet
-- (schema/028): only the delta moves, and the new groups are made. The
-- old groups' users are the union of their day rows, so they are
-- recounted last, from the rows this move left (their rows are locked
-- already); so are their durations' sum, max and histogram (schema/021),
-- which P_DURATION (the report's reports.duration_ms, NULL when unknown)
-- moves exactly.

CREATE OR REPLACE FUNCTION move_report(p_app bigint, p_report bigint, p_from_key1 text,
                                       p_from_key2 text,
                                       p_to_key1 text, p_to_key2 text, p_to_frames1 jsonb,
                                       p_to_frames2 jsonb, p_day date, p_at timestamptz,
                                       p_app_version text, p_os_version text,
                                       p_device text, p_kind text, p_user text,
                                       p_duration bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  from_key text;
  to_key text;
  parent text;
  frames jsonb;
  dims boolean;
  waiting boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_app || '/' || p_user, 7));
  -- A report whose delta still waits (group_deltas, schema/026) is in none
  -- of the day, dimension or facet rows yet: its delta moves instead, and
  -- fold_group_deltas counts it under its new keys. Taken before any
  -- counter row: a fold holds deltas while it waits for day rows.
  UPDATE group_deltas SET key1 = p_to_key1, key2 = p_to_key2
   WHERE app_id = p_app AND report = p_report;
  waiting := FOUND;
  FOR lvl IN 1..2 LOOP
    from_key := CASE lvl WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
    to_key := CASE lvl WHEN 1 THEN p_to_key1 ELSE p_to_key2 END;
    parent := CASE lvl WHEN 1 THEN NULL ELSE p_to_key1 END;
    frames := CASE lvl WHEN 1 THEN p_to_frames1 ELSE p_to_frames2 END;
    IF from_key = to_key OR waiting THEN
      -- Locked now all the same, in the order ingest_reports locks the
      -- groups' rows: reprocessing offers the report's culprit to its
      -- groups after the day rows (offer_culprit), and taking this row
      -- only then would reverse ingest's order and deadlock with it. A
      -- waiting delta is in no group's counters yet: its new group only
      -- has to exist for the fold to count it there.
      IF from_key <> to_key AND from_key COLLATE "C" < to_key COLLATE "C" THEN
        PERFORM 1 FROM groups
          WHERE app_id = p_app AND level = lvl AND key = from_key FOR UPDATE;
      END IF;
      INSERT INTO groups AS g (app_id, level, key, parent_key, frames, reports, users,
                               users_hll, first_seen, last_seen)
      VALUES (p_app, lvl, to_key, parent, frames, 0, 0, hll_empty(12, 5, 1024, 0), p_at, p_at)
      ON CONFLICT (app_id, level, key) DO UPDATE SET reports = g.reports WHERE false;
      IF from_key <> to_key AND from_key COLLATE "C" > to_key COLLATE "C" THEN
        PERFORM 1 FROM groups
          WHERE app_id = p_app AND level = lvl AND key = from_key FOR UPDATE;
      END IF;
      CONTINUE;
    ELSIF from_key COLLATE "C" <= to_key COLLATE "C" THEN
      PERFORM count_out_of_group(p_app, lvl::smallint, from_key, false);
      PERFORM count_into_group(p_app, lvl::smallint, to_key, parent, frames, p_at, p_user,
                               p_duration);
    ELSE
      PERFORM count_into_group(p_app, lvl::smallint, to_key, parent, frames, p_at, p_user,
                               p_duration);
      PERFORM count_out_of_group(p_app, lvl::smallint, from_key, false);
    END IF;
  END LOOP;
  FOREACH dims IN ARRAY CASE WHEN waiting THEN '{}'::boolean[] ELSE ARRAY[false, true] END LOOP
    FOR lvl IN 1..2 LOOP
      to_key := CASE lvl WHEN 1 THEN p_to_key1 ELSE p_to_key2 END;
      IF to_key <> (CASE lvl WHEN 1 THEN p_from_key1 ELSE p_from_key2 END) THEN
        PERFORM move_day_row(p_app, lvl::smallint, p_from_key1, p_from_key2, to_key, p_day, p_at,
                             p_user, dims, p_app_version, p_os_version, p_device, p_kind,
                             p_duration);
      END IF;
    END LOOP;
  END LOOP;
  FOR lvl IN 1..2 LOOP
    to_key := CASE lvl WHEN 1 THEN p_to_key1 ELSE p_to_key2 END;
    IF NOT waiting AND to_key <> (CASE lvl WHEN 1 THEN p_from_key1 ELSE p_from_key2 END) THEN
      PERFORM move_facet_days(p_app, lvl::smallint, p_from_key1, p_from_key2, to_key, p_day,
                              p_at, p_user, p_app_version, p_os_version, p_device, p_kind,
                              p_duration);
    END IF;
  END LOOP;
  FOR lvl IN 1..2 LOOP
    from_key := CASE lvl WHEN 1 THEN p_from_key1 ELSE p_from_key2 END;
    IF NOT waiting AND from_key <> (CASE lvl WHEN 1 THEN p_to_key1 ELSE p_to_key2 END) THEN
      PERFORM count_out_of_group(p_app, lvl::smallint, from_key, true);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION move_report(bigint, bigint, text, text, text, text, jsonb, jsonb, date,
                                timestamptz, text, text, text, text, text, bigint) IS
  'Reprocessing: counts report p_report (of duration p_duration, NULL when unknown) out of its old groups and into its new ones (groups, group_days, group_dim_days and group_facet_days: reports and durations exactly, the old rows'' users and longest duration recomputed from the kept reports; while its delta waits, the delta is moved instead, its new groups made), under the user''s lock, in the order ingest_reports locks the rows.';
