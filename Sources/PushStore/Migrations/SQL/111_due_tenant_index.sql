-- pushq:no-transaction
-- Fair shares between tenants (issue 48, item 5): the entries of pushq.due by lane, tenant and due
-- time. The claim asks it whether a lane has entries with a tenant (one probe per lane), and walks a
-- tenanted lane's tenants (one probe per tenant) and each tenant's entries in due order; NULL
-- tenants are in it too (NULL is one tenant of its own). Built CONCURRENTLY: producers and workers
-- go on; an interrupted build leaves an invalid index, which the next `pushq migrate` drops and
-- builds again.
CREATE INDEX CONCURRENTLY IF NOT EXISTS due_tenant ON pushq.due (lane, tenant, due_at, id);
