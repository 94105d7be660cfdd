-- group_events_to_outbox — an event's deliveries, one per webhook of its
-- app subscribed to its type, written with the event (SPEC §11.2).
-- Applied by `stallscope migrate` after the numbered migrations, at every
-- run: edit it in place. A new argument list or return type also needs a
-- numbered migration dropping the old one (docs/STORAGE.md §Schema).
--
-- A trigger, not a step in each writer: ingest, reprocessing, the fold,
-- the background loop and a user's PATCH all write events, and each
-- delivery must be in the transaction of its cause (the outbox) whoever
-- wrote it. Events are rare: a row trigger costs nothing in the common
-- batch, which writes none.

CREATE OR REPLACE FUNCTION group_events_to_outbox()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_outbox (event, app_id, webhook)
  SELECT NEW.id, NEW.app_id, w.name FROM webhooks w
   WHERE w.app_id = NEW.app_id AND NEW.type = ANY (w.events)
   ORDER BY w.name;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION group_events_to_outbox() IS
  'Trigger: queues a new group event for every webhook of its app subscribed to its type (alert_outbox), in the event''s transaction.';

CREATE OR REPLACE TRIGGER group_events_to_outbox AFTER INSERT ON group_events
  FOR EACH ROW EXECUTE FUNCTION group_events_to_outbox();
