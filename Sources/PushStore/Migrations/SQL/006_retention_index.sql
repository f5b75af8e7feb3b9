-- pushq:no-transaction
-- pushq schema, version 6: an index of final rows by when they finished, for the pruner
-- (retention: PUSHQ_RETAIN_SENT_SECONDS, PUSHQ_RETAIN_FINAL_SECONDS, `pushq prune`) and for
-- `pushq status`. Partial: rows that are not final are not in it, so the pruner cannot reach
-- them and the claim path does not maintain it until a row ends. `created_at` is the age of a
-- final row whose finished_at is NULL (cancelled by a producer that did not set it).
-- Built CONCURRENTLY: producers and workers go on while it builds, however large the table.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_finished ON pushq.notifications (finished_at, created_at)
    WHERE status IN ('sent', 'failed', 'expired', 'cancelled')
