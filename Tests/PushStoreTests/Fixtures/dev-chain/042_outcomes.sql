-- pushq schema, version 42: sends and failures tallied per minute as workers write them (issue 23).
--
-- The dashboard's chart and failure reasons, `pushq status`'s recent failures and each lane's send
-- rate read pushq.outcomes instead of the final rows of pushq.notifications. Those rows were found
-- through `notifications_finished`, an index of the row's status and `finished_at`, the two columns
-- the write-back sets: while such an index exists, no write-back updates a row in place (HOT), and
-- a later schema drops it.
--
-- A worker of this release adds its rows to the tally in the statement that ends them: a claim
-- (a token found invalid, attempts used up), a write-back (sent, failed) and the write-back of a
-- poison row. A tally row is one minute of one worker's rows of one lane, status and reason
-- (workers never wait for each other's tally rows), kept a day and an hour: the upkeep deletes
-- older ones. Rows ended otherwise (expired, cancelled, an operator's UPDATE) are not sends or
-- failures and are not tallied; rows that workers of an earlier release end are not either.
--
-- A new table: nothing here locks a table that exists.
CREATE TABLE pushq.outcomes (
    status  text        NOT NULL CONSTRAINT outcomes_status CHECK (status IN ('sent', 'failed')),
    minute  timestamptz NOT NULL,
    lane    text        NOT NULL,
    worker  text        NOT NULL,
    -- The row's `last_reason` when it failed; '' when it was sent (or failed without one).
    reason  text        NOT NULL,
    rows    bigint      NOT NULL,
    CONSTRAINT outcomes_pkey PRIMARY KEY (status, minute, lane, worker, reason)
);
