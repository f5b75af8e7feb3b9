-- The schema of the worker prototype (README.md here): applied after `pushq migrate` of the current schema (psql -f).
\ir ../due-schema.sql
ALTER TABLE pushq.notifications SET (fillfactor = 33);
