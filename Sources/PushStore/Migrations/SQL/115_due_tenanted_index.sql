-- pushq:no-transaction
-- The plain claim (issue 48's cost with nothing set): whether any entry of pushq.due has a tenant,
-- in one probe of an index that holds only those entries; empty while no producer sets `tenant`,
-- so that the probe reads a page whatever the number of lanes and rows. A claim that finds one
-- asks each lane (lane, tenant). Built CONCURRENTLY: producers and workers go on; an interrupted
-- build leaves an invalid index, which the next `pushq migrate` drops and builds again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS due_tenanted ON pushq.due (lane, tenant) WHERE tenant IS NOT NULL;
