-- Frequency caps per recipient (issue 48, item 4), the part every worker of this release needs.
-- The lane's columns come in 113, gated on this release's workers (a worker that does not count
-- would send every capped row and reserve nothing, so the others' counts would miss its sends);
-- this release's claim reads them through pushq.lane_caps(), which this file defines to answer
-- nothing (no lane has a cap) and 113 replaces.
--
-- * pushq.recipient_sends: one reservation per row of a capped lane that a claim sent, under the
--   claim's now() (claims take turns under the fleet's claim lock, so each sees every earlier
--   claim's reservations). The primary key is the counting index: a recipient's sends inside a
--   window are one range of it. A row that ends other than sent gives its reservation back (the
--   write-back, the give-back); the upkeep prunes those older than the longest window (BRIN on
--   sent_at: rows arrive nearly in its order, so the index is a few pages).
-- * pushq.recipient_key(user_ref, provider, device_token): the recipient, SHA-256 of 'u:' ||
--   user_ref, else of 't:' || the token (an APNs token lower-case, as pushq.devices keeps it);
--   NULL for a broadcast (never capped).
-- * pushq.lane_caps(lane): the lane's cap, window and over_cap (no row: not capped).
--
-- A new table and two functions: no lock on any table producers or workers use.

CREATE TABLE pushq.recipient_sends (
    lane text NOT NULL,
    recipient bytea NOT NULL,
    sent_at timestamptz NOT NULL,
    id bigint NOT NULL,
    PRIMARY KEY (lane, recipient, sent_at, id)
);

CREATE INDEX recipient_sends_sent_at ON pushq.recipient_sends USING brin (sent_at);

CREATE FUNCTION pushq.recipient_key(user_ref text, provider text, device_token text) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN user_ref IS NOT NULL THEN sha256(convert_to('u:' || user_ref, 'UTF8'))
                WHEN device_token IS NOT NULL
                THEN sha256(convert_to('t:' || CASE WHEN provider = 'apns' THEN lower(device_token) ELSE device_token END, 'UTF8'))
           END
$$;

-- What the claim reads of a lane's cap (113 reads pushq.lanes): no lane has one yet. A function of
-- its own, not more columns of pushq.lane_rules: CREATE OR REPLACE cannot change a function's
-- result columns, and dropping lane_rules under running workers would fail their prepared claims.
CREATE FUNCTION pushq.lane_caps(lane text) RETURNS TABLE (recipient_cap integer, recipient_window interval, over_cap text)
LANGUAGE sql STABLE AS $$
    SELECT NULL::integer, NULL::interval, NULL::text WHERE false
$$;
