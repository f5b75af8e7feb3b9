-- pushq:no-transaction
-- pushq schema, version 48: broadcast rows by channel and `created_at`, whatever their status.
-- `pushq status` counts a channel's waiting rows, and deleting a channel ends them (schema 21's
-- trigger), through it instead of `notifications_channel_waiting` (schema 20), whose predicate
-- names the row's status. Partial: rows to a device token are not in it. Built CONCURRENTLY.
CREATE INDEX CONCURRENTLY IF NOT EXISTS notifications_channel_created ON pushq.notifications (channel, created_at)
    WHERE channel IS NOT NULL
