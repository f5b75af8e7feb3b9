-- pushq:after-workers 113
-- pushq:lock-retry lock_timeout=200ms tries=100
-- Frequency caps per recipient (issue 48, item 4), once every live worker counts them: a worker
-- that registered a schema_known below 113 (0.4.0, or this release's before 112) would send every
-- capped row and reserve nothing, so `pushq migrate` holds this file back, and names the workers it
-- waits for, until none of them runs. Until then the columns do not exist and no lane can be given
-- a cap.
--
-- * pushq.lanes.recipient_cap (> 0) and recipient_window (> 0), both or neither
--   (lanes_recipient_cap): at most recipient_cap rows of the lane are sent to one recipient in any
--   window of recipient_window.
-- * pushq.lanes.over_cap: 'skip' (the row ends cancelled/FrequencyCapped) or 'defer' (it waits
--   until the window has room) (lanes_over_cap).
-- * pushq.lane_caps(lane) reads them.
--
-- pushq.lanes is small (the lanes an operator configured): plain CHECKs, validated at once. ALTER
-- TABLE takes ACCESS EXCLUSIVE on it for an instant (every claim reads it), waited for at most
-- 200 ms at a time.

ALTER TABLE pushq.lanes
    ADD COLUMN recipient_cap integer,
    ADD COLUMN recipient_window interval,
    ADD COLUMN over_cap text NOT NULL DEFAULT 'skip',
    ADD CONSTRAINT lanes_recipient_cap CHECK ((recipient_cap IS NULL) = (recipient_window IS NULL)
                                             AND recipient_cap > 0 AND recipient_window > interval '0'),
    ADD CONSTRAINT lanes_over_cap CHECK (over_cap IN ('skip', 'defer'));

CREATE OR REPLACE FUNCTION pushq.lane_caps(lane text) RETURNS TABLE (recipient_cap integer, recipient_window interval, over_cap text)
LANGUAGE sql STABLE AS $$
    SELECT l.recipient_cap, l.recipient_window, l.over_cap
      FROM pushq.lanes l
     WHERE l.name = lane_caps.lane AND l.recipient_cap IS NOT NULL
$$;
