-- pushq:after-workers 109
-- pushq:lock-retry lock_timeout=200ms tries=100
-- Quiet hours per lane (issue 48, item 3), once every live worker knows them: a worker of 0.4.0
-- (or any worker that registered a schema_known below 109) would send a quiet lane's rows at
-- night, so `pushq migrate` holds this file back, and names the workers it waits for, until none
-- of them runs. Until then the columns do not exist and no lane can be given quiet hours.
--
-- * pushq.lanes.quiet_start, quiet_end (time, both or neither, never equal: lanes_quiet_hours;
--   start after end wraps midnight, e.g. 21:00–08:00): no row of the lane is sent while its
--   recipient's local time is inside [quiet_start, quiet_end).
-- * pushq.lanes.time_zone: the zone of the lane's rows that have none (NULL: UTC), an IANA name
--   checked by pushq.time_zone_known() (23514 lanes_time_zone_known).
-- * pushq.lane_rules(lane) reads them (the lane's row, or default's for a lane without one), with
--   a zone pushq.time_zones no longer lists read as none.
--
-- pushq.lanes is small (the lanes an operator configured): plain CHECKs, validated at once. ALTER
-- TABLE takes ACCESS EXCLUSIVE on it for an instant (every claim reads it), waited for at most
-- 200 ms at a time.

ALTER TABLE pushq.lanes
    ADD COLUMN quiet_start time,
    ADD COLUMN quiet_end time,
    ADD COLUMN time_zone text,
    ADD CONSTRAINT lanes_quiet_hours CHECK ((quiet_start IS NULL) = (quiet_end IS NULL) AND quiet_start <> quiet_end);

CREATE TRIGGER lanes_time_zone
    BEFORE INSERT OR UPDATE OF time_zone ON pushq.lanes
    FOR EACH ROW WHEN (NEW.time_zone IS NOT NULL) EXECUTE FUNCTION pushq.time_zone_known();

CREATE OR REPLACE FUNCTION pushq.lane_rules(lane text) RETURNS TABLE (quiet_start time, quiet_end time, time_zone text)
LANGUAGE sql STABLE AS $$
    SELECT l.quiet_start, l.quiet_end, (SELECT z.name FROM pushq.time_zones z WHERE z.name = l.time_zone)
      FROM pushq.lanes l
     WHERE l.name = lane_rules.lane AND l.quiet_start IS NOT NULL
$$;
