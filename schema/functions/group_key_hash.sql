-- group_key_hash — a 4-byte hash of a group key: what reports_group_idx
-- holds instead of the key (schema/037).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- The index is on hashtext(key1), hashtext(key2): PostgreSQL inlines this
-- function into a reader's condition, which then matches the index. So the
-- body stays exactly hashtext(p_key), or the index is made again with it.
-- Two keys may share a hash: a reader compares the row's keys too.

CREATE OR REPLACE FUNCTION group_key_hash(p_key text)
RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT hashtext(p_key);
$$;
COMMENT ON FUNCTION group_key_hash(text) IS
  'A 4-byte hash of group key P_KEY (hashtext), as reports_group_idx holds it; two keys may share one.';
