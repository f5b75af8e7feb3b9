-- pushq:no-transaction
-- pushq schema, version 14: waiting rows by lane, in the order each lane's rows are claimed.
-- The claim walks it one lane at a time, lowest rank first. Built CONCURRENTLY: producers and
-- workers go on while it builds. (notifications_due, by scheduled_at alone, stays for workers
-- older than version 14 and for the expiry of backlogs.)
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_lane_due ON pushq.notifications (lane, scheduled_at, id)
    WHERE status IN ('queued', 'retrying')
