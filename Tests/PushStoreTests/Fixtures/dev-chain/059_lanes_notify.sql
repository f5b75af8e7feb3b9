-- pushq:lock-retry lock_timeout=200ms tries=100
-- pushq schema, version 59: a change to pushq.lanes notifies the workers.
--
-- Every statement that inserts, updates or deletes rows of pushq.lanes (or truncates it) sends
-- one NOTIFY pushq_lanes, with an empty payload, when it commits. Workers of this release listen
-- on it: they read the lanes again and stop at once the requests of a paused lane that they
-- claimed but have not started (given back to the queue, attempts untouched), and pace the
-- starts of capped lanes with the caps they read. The dashboard's lane cancel notifies the same
-- channel with 'cancel:<lane>' (no schema needed).
--
-- Nothing is read or rewritten. CREATE TRIGGER takes SHARE ROW EXCLUSIVE on pushq.lanes (a few
-- rows; claims only read it) for an instant, waiting at most 200 ms at a time (lock-retry).
-- Workers of earlier releases do not listen on pushq_lanes: they ignore the notices, and a pause
-- stops only their claims, as before.
CREATE FUNCTION pushq.notify_lanes_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('pushq_lanes', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER lanes_notify
    AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON pushq.lanes
    FOR EACH STATEMENT EXECUTE FUNCTION pushq.notify_lanes_changed();
