-- due-delete: due rows deleted at claim, one lease row per claim; one HOT update of the row
-- Loaded by scripts/bench (part `designs`) on a fresh database of the current schema.
\ir due-schema.sql
ALTER TABLE pushq.notifications SET (fillfactor = 50);
CREATE TABLE pushq.leases (id bigserial PRIMARY KEY, worker text NOT NULL, locked_until timestamptz NOT NULL, ids bigint[] NOT NULL);
-- drain_due: with `mark`, the claim also marks each row it takes (status, locked_by, locked_until).
CREATE PROCEDURE drain_due(batch int, w text, mark boolean) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; n int; cid bigint;
BEGIN
  LOOP
    WITH c AS (DELETE FROM pushq.due d USING (SELECT id FROM pushq.due WHERE lane = 'default' AND due_at <= now() ORDER BY due_at, id LIMIT batch FOR UPDATE SKIP LOCKED) s
               WHERE d.id = s.id RETURNING d.id)
    SELECT array_agg(id) INTO ids FROM c;
    EXIT WHEN ids IS NULL;
    INSERT INTO pushq.leases (worker, locked_until, ids) VALUES (w, now() + interval '60 s', ids) RETURNING id INTO cid;
    IF mark THEN
      WITH m AS (UPDATE pushq.notifications SET status = 'sending', locked_by = w, locked_until = now() + interval '60 s'
                 WHERE id = ANY(ids) AND status IN ('queued','retrying') RETURNING payload)
      SELECT sum(length(payload::text)) INTO n FROM m;
    ELSE
      SELECT sum(length(payload::text)) INTO n FROM pushq.notifications WHERE id = ANY(ids);
    END IF;
    COMMIT;
    PERFORM 1 FROM pushq.leases WHERE id = cid AND worker = w FOR UPDATE;
    IF FOUND THEN
      UPDATE pushq.notifications n SET status = 'sent', attempts = n.attempts + 1, last_status = 200, sent_at = now(), finished_at = now(),
                                       locked_by = NULL, locked_until = NULL
       WHERE n.id = ANY(ids) AND n.status = CASE WHEN mark THEN 'sending' ELSE n.status END;
      DELETE FROM pushq.leases WHERE id = cid;
    END IF;
    COMMIT;
  END LOOP;
END $$;
CREATE PROCEDURE drain(batch int, w text) LANGUAGE plpgsql AS $$ BEGIN CALL drain_due(batch, w, false); END $$;
