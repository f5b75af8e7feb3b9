import Foundation
import PGClient

/// The queue's size as the metrics show it: read by one worker at a time.
public struct QueueGauges: Sendable, Hashable {
    /// Rows `queued` or `retrying` whose `scheduled_at` has come, counted up to
    /// ``PGConnection/dueRowsCountLimit``.
    public var dueRows: Int
    /// Seconds since the oldest due row's `scheduled_at`; 0 when no row is due.
    public var oldestDueAgeSeconds: Double

    public init(dueRows: Int, oldestDueAgeSeconds: Double) {
        self.dueRows = dueRows
        self.oldestDueAgeSeconds = oldestDueAgeSeconds
    }
}

extension PGConnection {
    /// The advisory lock (two-key form, `pg_locks.classid`/`objid`) whose holder reads the
    /// queue gauges: "pushq" / "gaug".
    static let queueGaugesLockKeys: (Int32, Int32) = (0x7075_7368, 0x6761_7567)

    /// The most due rows ``queueGauges()`` counts: past this the gauge saturates, so that a
    /// huge backlog costs a bounded index scan every few seconds.
    public static let dueRowsCountLimit = 1_000_000

    /// Whether this session holds the queue-gauges lock, taking it if it is free.
    ///
    /// A session-level advisory lock: the first worker to ask keeps it until its connection
    /// ends (a stop, a crash, a lost connection), then the next worker to ask takes over. Asking
    /// again while holding it does not stack it (the statement looks in `pg_locks` first).
    public func holdsQueueGaugesLock() throws(PGError) -> Bool {
        let (k1, k2) = Self.queueGaugesLockKeys
        return try query("""
            SELECT CASE WHEN EXISTS (
                       SELECT 1 FROM pg_locks
                        WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                          AND classid = ($1::int4)::oid AND objid = ($2::int4)::oid AND objsubid = 2)
                   THEN true ELSE pg_try_advisory_lock($1::int4, $2::int4) END AS held
            """, [Int(k1), Int(k2)]).firstRow().decode(Bool?.self, "held") ?? false
    }

    /// Due rows and the age of the oldest, from pushq.due (the rows waiting, and those in flight
    /// under a lease that ended, ``recoverLapsedLeases(limit:)``), lane by lane along due_order
    /// (``ClaimStatement/dueLanes``): the count reads at most ``dueRowsCountLimit`` due entries,
    /// the oldest is the least of each lane's first entry.
    public func queueGauges() throws(PGError) -> QueueGauges {
        let row = try query(Self.queueGaugesSQL, [Self.dueRowsCountLimit]).firstRow()
        return QueueGauges(dueRows: try row.decode(Int?.self, "due_rows") ?? 0,
                           oldestDueAgeSeconds: max(0, try row.decode(Double?.self, "oldest_due_age") ?? 0))
    }

    static let queueGaugesSQL = ClaimStatement.dueLanes + """
        SELECT (SELECT count(*) FROM (
                    SELECT 1 FROM waiting w
                     CROSS JOIN LATERAL (SELECT 1 FROM pushq.due d WHERE d.lane = w.lane AND d.due_at <= now() LIMIT $1) e
                     WHERE w.lane IS NOT NULL
                     LIMIT $1) due)::int8 AS due_rows,
               COALESCE(extract(epoch FROM now() - \(ClaimStatement.oldestDueAtSQL))::float8, 0) AS oldest_due_age
        """
}

/// One lane's waiting rows and its settings, as `pushq status` and the metrics show them.
public struct LaneGauges: Sendable, Hashable {
    /// The lane's name (`pushq.notifications.lane`).
    public var name: String
    /// Whether `pushq.lanes` has a row of this name. A lane without one behaves like `default`
    /// (its rank, no cap, never paused); the metrics count it under the label `other`.
    public var configured: Bool
    /// `pushq.lanes.rank` (`default`'s for a lane that is not configured).
    public var rank: Int
    /// `pushq.lanes.max_per_second`; nil: no cap.
    public var maxPerSecond: Double?
    /// `pushq.lanes.paused`.
    public var paused: Bool
    /// The lane's rows `queued` or `retrying` whose `scheduled_at` has come, counted up to
    /// ``PGConnection/dueRowsCountLimit``.
    public var dueRows: Int
    /// Seconds since the `scheduled_at` of the lane's oldest due row; 0 when none is due.
    public var oldestDueAgeSeconds: Double
    /// The lane's rows waiting for the end of its quiet hours where their recipient is (entries
    /// of pushq.due held `quiet`, not yet due), counted up to ``PGConnection/dueRowsCountLimit``:
    /// apart from ``dueRows``, which are rows that would go out now.
    public var quietRows: Int = 0
    /// The lane's quiet hours, `HH:MM–HH:MM` and the zone of its rows without one (`UTC` when it
    /// names none), `default`'s for a lane without a row; nil when it has none.
    public var quietHours: String?
    /// The lane's rows waiting until their recipient's frequency cap has room again (entries of
    /// pushq.due held `cap`, not yet due), counted up to ``PGConnection/dueRowsCountLimit``: apart
    /// from ``dueRows`` and ``quietRows``.
    public var cappedRows: Int = 0
    /// The lane's frequency cap per recipient (`default`'s for a lane without a row); nil when it
    /// has none.
    public var recipientCap: RecipientCap?
}

/// A lane's frequency cap per recipient (`pushq.lanes.recipient_cap`, `recipient_window`,
/// `over_cap`): at most ``cap`` rows sent to one recipient in any window of ``windowSeconds``.
public struct RecipientCap: Sendable, Hashable, CustomStringConvertible {
    public var cap: Int
    public var windowSeconds: Double
    /// `skip` (a row over the cap ends `cancelled`/`FrequencyCapped`) or `defer` (it waits).
    public var overCap: String

    public init(cap: Int, windowSeconds: Double, overCap: String) {
        self.cap = cap
        self.windowSeconds = windowSeconds
        self.overCap = overCap
    }

    /// `3 per 1 d, skip`: the window in its largest whole unit (d, h, min, else s).
    public var description: String {
        let units: [(Double, String)] = [(86400, "d"), (3600, "h"), (60, "min")]
        let window = units.first { windowSeconds >= $0.0 && windowSeconds.truncatingRemainder(dividingBy: $0.0) == 0 }
            .map { "\(Int(windowSeconds / $0.0)) \($0.1)" }
            ?? (windowSeconds == windowSeconds.rounded() ? "\(Int(windowSeconds)) s" : "\(windowSeconds) s")
        return "\(cap) per \(window), \(overCap)"
    }
}

extension PGConnection {
    /// At most this many lanes without a row in `pushq.lanes` are read (the first by name):
    /// producers name lanes, so their number has no bound of its own.
    static let unconfiguredLaneLimit = 100

    /// The names of `pushq.lanes`: the lanes the metrics name (every other lane is `other`).
    public func laneNames() throws(PGError) -> [String] {
        let r = try query("SELECT name FROM pushq.lanes ORDER BY name")
        return try r.rows.map { row throws(PGError) in try row.string("name") ?? "" }
    }

    /// Every lane of `pushq.lanes`, and the lanes without a row there that have rows waiting
    /// (at most ``unconfiguredLaneLimit``), with their due rows and oldest due age.
    public func laneGauges() throws(PGError) -> [LaneGauges] {
        let r = try query(Self.laneGaugesSQL, [Self.dueRowsCountLimit, Self.unconfiguredLaneLimit])
        var lanes: [LaneGauges] = []
        lanes.reserveCapacity(r.count)
        for row in r.rows {
            lanes.append(LaneGauges(name: try row.string("name") ?? "", configured: try row.decode(Bool?.self, "configured") ?? false,
                                    rank: try row.decode(Int?.self, "rank") ?? 100, maxPerSecond: try row.decode(Double?.self, "max_per_second"),
                                    paused: try row.decode(Bool?.self, "paused") ?? false, dueRows: try row.decode(Int?.self, "due_rows") ?? 0,
                                    oldestDueAgeSeconds: max(0, try row.decode(Double?.self, "oldest_due_age") ?? 0),
                                    quietRows: try row.decode(Int?.self, "quiet_rows") ?? 0, quietHours: try row.string("quiet_hours"),
                                    cappedRows: try row.decode(Int?.self, "capped_rows") ?? 0,
                                    recipientCap: try Self.recipientCap(row)))
        }
        return lanes
    }

    /// A row's `recipient_cap`, `recipient_window` (seconds) and `over_cap`; nil without a cap.
    static func recipientCap(_ row: PGRow) throws(PGError) -> RecipientCap? {
        guard let cap = try row.decode(Int?.self, "recipient_cap"), let window = try row.decode(Double?.self, "recipient_window") else { return nil }
        return RecipientCap(cap: cap, windowSeconds: window, overCap: try row.string("over_cap") ?? "skip")
    }

    /// The lanes with waiting rows are found by a loose scan of pushq.due's `due_order`
    /// (``ClaimStatement/dueLanes``: one index descent per lane; `$2` lanes not in
    /// `pushq.lanes` are shown at most); each lane's due rows are a range of that index, counted
    /// up to `$1` entries, and its oldest is the range's first entry. The entries are those of the
    /// rows waiting and of those in flight under a lease that ended (the claim takes both).
    static let laneGaugesSQL = ClaimStatement.dueLanes + """
        , shown AS (
            SELECT name, true AS configured, rank, max_per_second, paused FROM pushq.lanes
            UNION ALL
            SELECT u.lane, false, COALESCE((SELECT rank FROM pushq.lanes WHERE name = 'default'), 100), NULL, false
              FROM (SELECT w.lane FROM waiting w
                     WHERE w.lane IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pushq.lanes l WHERE l.name = w.lane)
                     LIMIT $2) u
        )
        SELECT l.name, l.configured, l.rank, l.max_per_second, l.paused,
               (SELECT count(*) FROM (
                    SELECT 1 FROM pushq.due d WHERE d.lane = l.name AND d.due_at <= now() LIMIT $1) due)::int8 AS due_rows,
               COALESCE(extract(epoch FROM now() - (
                    SELECT d.due_at FROM pushq.due d WHERE d.lane = l.name AND d.due_at <= now()
                     ORDER BY d.due_at LIMIT 1))::float8, 0) AS oldest_due_age,
               -- Waiting for quiet hours to end (index due_held), and the lane's window (pushq.lane_rules).
               (SELECT count(*) FROM (
                    SELECT 1 FROM pushq.due d WHERE d.lane = l.name AND d.held = 'quiet' AND d.due_at > now() LIMIT $1) quiet)::int8 AS quiet_rows,
               -- Waiting for a frequency cap's window to have room (index due_held), and the lane's cap (pushq.lane_caps).
               (SELECT count(*) FROM (
                    SELECT 1 FROM pushq.due d WHERE d.lane = l.name AND d.held = 'cap' AND d.due_at > now() LIMIT $1) capped)::int8 AS capped_rows,
               k.recipient_cap, extract(epoch FROM k.recipient_window)::float8 AS recipient_window, k.over_cap,
               (SELECT left(r.quiet_start::text, 5) || '–' || left(r.quiet_end::text, 5) || ' ' || COALESCE(r.time_zone, 'UTC')
                  FROM pushq.lane_rules(CASE WHEN l.configured THEN l.name ELSE 'default' END) r) AS quiet_hours
          FROM shown l
          LEFT JOIN LATERAL pushq.lane_caps(CASE WHEN l.configured THEN l.name ELSE 'default' END) k ON true
         ORDER BY l.configured DESC, l.rank, l.name
        """
}
