-- today, claims taking turns (a transaction-level advisory lock per claim, as the worker does)
-- Loaded by scripts/bench (part `designs`) on a fresh database of the current schema.
\ir today.sql
CREATE OR REPLACE PROCEDURE drain(batch int, w text) LANGUAGE plpgsql AS $$ BEGIN CALL drain_today(batch, w, true); END $$;
