-- due-lease: a narrow due table holds what waits and the lease; one HOT update of the row
-- Loaded by scripts/bench (part `designs`) on a fresh database of the current schema.
\ir due-schema.sql
ALTER TABLE pushq.notifications SET (fillfactor = 50);
-- the lease is a later due time and the worker's name in the due row
ALTER TABLE pushq.due ADD COLUMN locked_by text;
CREATE PROCEDURE drain(batch int, w text) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; n int;
BEGIN
  LOOP
    WITH c AS (UPDATE pushq.due d SET due_at = now() + interval '60 s', locked_by = w
               FROM (SELECT id FROM pushq.due WHERE lane = 'default' AND due_at <= now() ORDER BY due_at, id LIMIT batch FOR UPDATE SKIP LOCKED) s
               WHERE d.id = s.id RETURNING d.id)
    SELECT array_agg(id) INTO ids FROM c;
    EXIT WHEN ids IS NULL;
    SELECT sum(length(payload::text)) INTO n FROM pushq.notifications WHERE id = ANY(ids);
    COMMIT;
    WITH gone AS (DELETE FROM pushq.due WHERE id = ANY(ids) AND locked_by = w RETURNING id)
    UPDATE pushq.notifications n SET status = 'sent', attempts = n.attempts + 1, last_status = 200, sent_at = now(), finished_at = now()
     FROM gone WHERE n.id = gone.id;
    COMMIT;
  END LOOP;
END $$;
