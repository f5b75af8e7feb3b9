-- pushq schema, version 45: each gated migration recorded with the schema its workers must know.
--
-- pushq.schema_migrations.workers_know: for a migration gated by `-- pushq:after-workers N`, N.
-- Once such a migration has run, what workers that know less than schema N read is gone (an
-- index their claims walk): a worker or `pushq serve` of this release or a later one refuses to
-- start on such a database if it knows less than the highest N recorded, instead of reading the
-- whole table. `pushq migrate` records N when it applies a gated migration; here, for the gated
-- migrations applied before this column existed (40 and 41).
--
-- Adding a nullable column takes pushq.schema_migrations' ACCESS EXCLUSIVE lock for an instant;
-- only workers starting and `pushq migrate` read that table.
ALTER TABLE pushq.schema_migrations ADD COLUMN workers_know integer;
UPDATE pushq.schema_migrations SET workers_know = 35 WHERE version = 40;
UPDATE pushq.schema_migrations SET workers_know = 36 WHERE version = 41;
