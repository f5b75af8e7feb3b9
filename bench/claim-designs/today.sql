-- today: the claim and the write-back are non-HOT updates of the row
-- Loaded by scripts/bench (part `designs`) on a fresh database of the current schema.
-- drain_today: claim `batch` rows for worker `w`, commit, write them back as sent, commit, until
-- none is due; with `turns`, each claim first takes the fleet's advisory lock (as the worker does).
CREATE PROCEDURE drain_today(batch int, w text, turns boolean) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; n int;
BEGIN
  LOOP
    IF turns THEN PERFORM pg_advisory_xact_lock(42); END IF;
    WITH c AS (UPDATE pushq.notifications n SET status = 'sending', locked_by = w, locked_until = now() + interval '60 s', attempts = n.attempts
               FROM (SELECT id FROM pushq.notifications WHERE lane = 'default' AND status IN ('queued','retrying') AND scheduled_at <= now()
                     ORDER BY scheduled_at, id LIMIT batch FOR UPDATE SKIP LOCKED) s
               WHERE n.id = s.id RETURNING n.id, n.payload)
    SELECT array_agg(id), sum(length(payload::text)) INTO ids, n FROM c;
    EXIT WHEN ids IS NULL;
    COMMIT;
    UPDATE pushq.notifications n SET status = 'sent', attempts = n.attempts + 1, last_status = 200, sent_at = now(), finished_at = now(), locked_by = NULL, locked_until = NULL
     WHERE n.id = ANY(ids) AND n.status = 'sending' AND n.locked_by = w;
    COMMIT;
  END LOOP;
END $$;
CREATE PROCEDURE drain(batch int, w text) LANGUAGE plpgsql AS $$ BEGIN CALL drain_today(batch, w, false); END $$;
