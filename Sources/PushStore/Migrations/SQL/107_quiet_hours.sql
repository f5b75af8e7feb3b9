-- pushq:lock-retry lock_timeout=200ms tries=100
-- Quiet hours per lane (issue 48, item 3), the part every worker of this release needs. The lane's
-- columns come in 109, gated on this release's workers (a 0.4.0 worker would send a quiet lane's
-- rows at night); this release's claim reads them through pushq.lane_rules(), which this file
-- defines to answer nothing (no lane has quiet hours) and 109 replaces.
--
-- * pushq.due.held: NULL, or 'quiet' for an entry the claim (or a worker's give-back) moved to the
--   end of its lane's quiet hours where the recipient is. The claim sets it; pushq.due_waiting()
--   (a row rescheduled, given back, made to wait again) clears it. `pushq status` counts the
--   entries held and not yet due apart from the due ones (index due_held, 108).
-- * pushq.quiet_window(at, zone, quiet_start, quiet_end): the window [opens, closes) of local
--   times [quiet_start, quiet_end) in `zone` that holds `at`, or the next one after it; NULL for
--   no window. Local time is PostgreSQL's (AT TIME ZONE): a clock change inside the window moves
--   its end (spring forward: an hour sooner in UTC; an end the jump skips ends the window at the
--   jump; fall back: an hour later, and the repeated hour is entered again).
--   pushq.quiet_until(at, …): the window's end when `at` is inside it, else NULL.
-- * pushq.lane_rules(lane): the lane's quiet hours and zone (its row of pushq.lanes, or
--   default's for a lane without one): no row here.
--
-- pushq.due gains a column without a default (catalog only; ACCESS EXCLUSIVE for an instant,
-- waited for at most 200 ms at a time). Workers of 0.4.0 name none of this: their claim walks
-- due entries by due_at, and an entry moved to a window's end is simply not due before it.

ALTER TABLE pushq.due ADD COLUMN held text;

CREATE OR REPLACE FUNCTION pushq.due_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying)
    VALUES (NEW.id, NEW.lane, NEW.scheduled_at, NEW.expires_at, NEW.status = 'retrying')
    ON CONFLICT (id) DO UPDATE
       SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at, expires_at = EXCLUDED.expires_at, retrying = EXCLUDED.retrying,
           held = NULL;
    RETURN NULL;
END $$;

-- The quiet window at or after `at`: each pass of the loop covers one stretch of constant UTC
-- offset; the next boundary (the window's end when inside, its start when outside) is the local
-- time's next occurrence, and when the offset there differs, the change between is found by
-- halving (to the second) and the local time read again from it.
CREATE FUNCTION pushq.quiet_window(at timestamptz, zone text, quiet_start time, quiet_end time) RETURNS tstzrange
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    t timestamptz := at;
    opened timestamptz;
    here timestamp;
    off interval;
    inside boolean;
    boundary timestamp;
    target timestamptz;
    lo bigint;
    hi bigint;
    mid bigint;
BEGIN
    IF at IS NULL OR quiet_start IS NULL OR quiet_end IS NULL OR quiet_start = quiet_end THEN
        RETURN NULL;
    END IF;
    zone := COALESCE(zone, 'UTC');
    FOR pass IN 1..16 LOOP
        here := t AT TIME ZONE zone;
        off := here - (t AT TIME ZONE 'UTC');
        inside := CASE WHEN quiet_start < quiet_end THEN here::time >= quiet_start AND here::time < quiet_end
                       ELSE here::time >= quiet_start OR here::time < quiet_end END;
        IF inside AND opened IS NULL THEN
            opened := t;
        ELSIF NOT inside AND opened IS NOT NULL THEN
            RETURN tstzrange(opened, t);
        END IF;
        boundary := here::date + CASE WHEN inside THEN quiet_end ELSE quiet_start END;
        IF boundary < here THEN
            boundary := boundary + interval '1 day';
        END IF;
        target := (boundary - off) AT TIME ZONE 'UTC';
        IF (target AT TIME ZONE zone) - (target AT TIME ZONE 'UTC') = off THEN
            t := target;
        ELSE
            lo := floor(extract(epoch FROM t))::bigint;
            hi := ceil(extract(epoch FROM target))::bigint;
            WHILE hi - lo > 1 LOOP
                mid := lo + (hi - lo) / 2;
                IF (to_timestamp(mid) AT TIME ZONE zone) - (to_timestamp(mid) AT TIME ZONE 'UTC') = off THEN
                    lo := mid;
                ELSE
                    hi := mid;
                END IF;
            END LOOP;
            t := to_timestamp(hi);
        END IF;
    END LOOP;
    RETURN CASE WHEN opened IS NOT NULL THEN tstzrange(opened, t) END;
END
$$;

CREATE FUNCTION pushq.quiet_until(at timestamptz, zone text, quiet_start time, quiet_end time) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN w @> at THEN upper(w) END FROM pushq.quiet_window(at, zone, quiet_start, quiet_end) w
$$;

-- What the claim reads of a lane's quiet hours (109 reads pushq.lanes): no lane has any yet.
CREATE FUNCTION pushq.lane_rules(lane text) RETURNS TABLE (quiet_start time, quiet_end time, time_zone text)
LANGUAGE sql STABLE AS $$
    SELECT NULL::time, NULL::time, NULL::text WHERE false
$$;
