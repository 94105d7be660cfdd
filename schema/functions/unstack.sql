-- unstack — a report's document as the server wrote it, from what its row
-- keeps (schema/018, docs/STORAGE.md "Stacks").
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The skeleton holds one 0x01 byte per stack; stack i of P_STACKS goes
-- where byte i was.

CREATE OR REPLACE FUNCTION unstack(p_app bigint, p_skeleton text, p_stacks bytea)
RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT coalesce(string_agg(s.part || coalesce((SELECT b.body FROM stacks b
                                                  WHERE b.app_id = p_app
                                                    AND b.hash = stack_at(p_stacks, s.o::integer)), ''),
                             '' ORDER BY s.o), '')
    FROM unnest(string_to_array(p_skeleton, chr(1))) WITH ORDINALITY AS s(part, o)
$$;
COMMENT ON FUNCTION unstack(bigint, text, bytea) IS
  'A stored document (reports.raw or symbolized) with its stacks put back: each 0x01 byte of the skeleton replaced by the body of the stack of the same rank in p_stacks.';
