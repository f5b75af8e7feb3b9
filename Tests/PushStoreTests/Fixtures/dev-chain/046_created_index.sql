-- pushq:no-transaction
-- pushq schema, version 46: every row by `created_at` (and `id`). Retention, `pushq status`'s
-- count of final rows, the dashboard's list of a reason's failed rows and its search by metadata
-- walk it instead of `notifications_finished`, an index of the row's status and `finished_at`:
-- those are columns the write-back sets, so while an index holds them no update of a row can be
-- HOT (written on its own page, without new index entries). Nothing updates `created_at` or `id`.
-- Built CONCURRENTLY: producers and workers go on while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_created ON pushq.notifications (created_at, id)
