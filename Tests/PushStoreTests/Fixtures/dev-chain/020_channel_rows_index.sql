-- pushq:no-transaction
-- pushq schema, version 20: waiting broadcast rows by channel. Deleting a channel ends its
-- waiting rows through it (schema 21's trigger), and `pushq status` counts them. Partial: rows
-- to a device token (every row before version 19) are not in it and cost nothing. Built
-- CONCURRENTLY: producers and workers go on while it builds.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_channel_waiting ON pushq.notifications (channel, scheduled_at)
    WHERE channel IS NOT NULL AND status IN ('queued', 'retrying')
