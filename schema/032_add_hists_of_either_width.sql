-- 032_add_hists_of_either_width.sql — add_hists takes histograms of
-- either width (schema/functions/add_hists.sql).
-- Run by `stallscope migrate` inside one transaction; never edit once
-- shipped.
--
-- Why: 031 made the dimension and facet rows' histograms integer[] and
-- left add_hists(bigint[], bigint[]) to add them, so each argument was an
-- array cast that the function's body refers to eight times. PostgreSQL
-- does not inline a SQL function whose argument is that costly, so every
-- row the fold upserted paid a call through the SQL function executor
-- (about 14 µs, schema/functions/add_hists.sql). The function file now
-- defines add_hists(anycompatiblearray, anycompatiblearray); the old
-- argument list goes (IF EXISTS: only the function files made it, and a
-- fresh database has none yet).

DROP FUNCTION IF EXISTS add_hists(bigint[], bigint[]);
