-- due-delete-marked: due-delete, and the claim marks the row (status, locked_by, locked_until): two HOT updates
-- Loaded by scripts/bench (part `designs`) on a fresh database of the current schema.
\ir due-delete.sql
ALTER TABLE pushq.notifications SET (fillfactor = 33);
CREATE OR REPLACE PROCEDURE drain(batch int, w text) LANGUAGE plpgsql AS $$ BEGIN CALL drain_due(batch, w, true); END $$;
