-- pushq schema, version 34: pushq.due filled with the rows that were waiting before schema 33's
-- triggers (those inserted or made waiting since have their entry already).
--
-- One INSERT … SELECT through notifications_due (the rows waiting, not the table): it locks no
-- row of pushq.notifications, so producers and workers of the previous release go on while it
-- runs. A row such a worker claims meanwhile may get an entry anyway; the claim skips it (it
-- checks the row's status) and the upkeep deletes it.
INSERT INTO pushq.due (id, lane, due_at)
SELECT n.id, n.lane, n.scheduled_at FROM pushq.notifications n WHERE n.status IN ('queued', 'retrying')
ON CONFLICT (id) DO NOTHING;
