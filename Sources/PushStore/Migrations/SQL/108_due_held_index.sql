-- pushq:no-transaction
-- Quiet hours per lane (issue 48, item 3): the entries of pushq.due held for quiet hours, by lane
-- and due time, for `pushq status`, the dashboard and the lane gauges (which count them apart from
-- the due ones). Partial: entries not held cost nothing. Built CONCURRENTLY: producers and workers
-- go on; an interrupted build leaves an invalid index, which the next `pushq migrate` drops and
-- builds again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS due_held ON pushq.due (lane, due_at) WHERE held IS NOT NULL;
