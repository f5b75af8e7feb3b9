import Foundation
import PGClient
import PushCore

/// The state of the queue, as `pushq status` shows it.
///
/// Every figure comes from an index, never from reading the whole of `pushq.notifications`:
/// the rows that are not final are counted exactly (through `pushq.due` and `pushq.leases`); the
/// final ones exactly up to ``QueueStatus/exactFinalLimit`` rows (the newest rows by
/// `created_at`, through `notifications_created`), above that estimated from the table's size
/// and statistics.
public struct QueueStatus: Sendable {
    /// Rows per status, all seven statuses present.
    public var counts: [String: Int]
    /// Whether the counts of final statuses are exact (else estimates).
    public var finalCountsExact: Bool
    /// Seconds the oldest due waiting row has waited, nil when none waits.
    public var oldestDueSeconds: Int?
    /// Workers holding `sending` rows: rows held, and how many of them have a lapsed lease.
    public var holders: [(worker: String, rows: Int, lapsed: Int)]
    /// Recent failure reasons: (status, reason, rows), most frequent first.
    public var reasons: [(status: String, reason: String, rows: Int)]
    /// Invalid tokens in `pushq.devices` by reason.
    public var invalidTokens: [(reason: String, tokens: Int)]
    public var holds: [HoldReport]
    public var workers: [WorkerRecord]
    public var rowsWithoutWorker: [(credential: String, rows: Int)]
    /// Every lane of `pushq.lanes`, then the lanes without a row there that have rows waiting
    /// or sent some in the last minute (at most ``PGConnection/unconfiguredLaneLimit``).
    public var lanes: [LaneStatus]
    /// Broadcast channels and the reconciliations with Apple (``PGConnection/channelsStatus()``).
    public var channels: ChannelsStatus
    /// The rows of each provider that has any, by status (``PGConnection/providerRows(throughIndex:sample:scale:)``).
    public var providers: [ProviderRows] = []
    /// The tenants with the most due rows in each lane that has tenants (``PGConnection/topTenants()``):
    /// read for the dashboard, not by `queueStatus(failureMinutes:)`.
    public var tenants: [TenantDue] = []

    /// The statuses in the order they are shown.
    public static let statuses = ["queued", "sending", "retrying", "sent", "failed", "expired", "cancelled"]
    /// Final rows are counted exactly up to this many; above it they are estimated.
    public static let exactFinalLimit = 100_000
    /// The newest rows read to count the final ones, at most: ``exactFinalLimit`` and the rows
    /// that are not final, up to this many. With more rows not final than this allows, final
    /// counts are estimates.
    public static let finalWalkLimit = 500_000
    /// How far back the send rate per lane looks, in seconds (pushq.outcomes' tally: the
    /// current minute and the part of the previous one within it).
    public static let sendRateSeconds = 60
}

/// One lane in `pushq status`: its waiting rows, settings and send rate.
public struct LaneStatus: Sendable {
    public var gauges: LaneGauges
    /// The lane's rows sent per second over the last ``QueueStatus/sendRateSeconds``.
    public var sentPerSecond: Double
}

extension PGConnection {
    /// The queue's state in one read-only snapshot (`REPEATABLE READ`), with sequential scans
    /// off so that even a skewed table is read through its indexes.
    ///
    /// - Parameter failureMinutes: how far back the failure reasons go.
    public func queueStatus(failureMinutes: Int) throws -> QueueStatus {
        try transaction { c in
            try c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            try c.execute("SET LOCAL enable_seqscan = off")
            var counts = Dictionary(uniqueKeysWithValues: QueueStatus.statuses.map { ($0, 0) })
            let throughIndex = try c.leaseIndexExists()
            // pushq.due read whole: the one statement that may (the setting is the transaction's).
            try c.execute("SET LOCAL enable_seqscan = on")
            let waiting = try c.query(Self.waitingCountsSQL)
            try c.execute("SET LOCAL enable_seqscan = off")
            let sending = try c.query(Self.sendingCountSQL(throughIndex))
            for part in [waiting, sending] {
                for row in part.rows { counts[try row.string("status") ?? "", default: 0] += try row.decode(Int?.self, "rows") ?? 0 }
            }
            // The newest rows by created_at: enough to hold every row that is not final and
            // one final row more than are counted exactly.
            let open = counts["queued", default: 0] + counts["sending", default: 0] + counts["retrying", default: 0]
            let walk = min(QueueStatus.exactFinalLimit + 1 + open, QueueStatus.finalWalkLimit)
            let newest = try c.query(Self.finalSampleSQL, [walk])
            var sample: [String: Int] = [:]
            var providerSample: [Provider: [String: Int]] = [:]
            var walked = 0
            for row in newest.rows {
                let n = try row.decode(Int?.self, "rows") ?? 0
                walked += n
                if let s = try row.string("status"), !["queued", "sending", "retrying"].contains(s) {
                    sample[s, default: 0] += n
                    if let p = Provider(rawValue: try row.string("provider") ?? "") { providerSample[p, default: [:]][s, default: 0] += n }
                }
            }
            let sampled = sample.values.reduce(0, +)
            let exact = walked < walk
            var scale: Double?
            if exact {
                for (s, n) in sample { counts[s] = n }
            } else {
                // Rows in the table as the planner estimates them (rows per page at the last
                // ANALYZE or VACUUM times the pages now; the live-row counter before any), less
                // the open rows counted above, shared out in the proportions of the newest final rows.
                let live = try c.query("""
                    SELECT CASE WHEN c.reltuples >= 0 AND c.relpages > 0
                                THEN round(c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int))::bigint
                                ELSE COALESCE((SELECT n_live_tup FROM pg_stat_user_tables WHERE relid = c.oid), 0) END AS rows
                      FROM pg_class c WHERE c.oid = 'pushq.notifications'::regclass
                    """)
                let total = max(sampled, (try live.rows.first?.decode(Int?.self, "rows") ?? 0) - open)
                for (s, n) in sample { counts[s] = Int((Double(total) * Double(n) / Double(sampled)).rounded()) }
                scale = sampled > 0 ? Double(total) / Double(sampled) : nil
            }
            let providers = try c.providerRows(throughIndex: throughIndex, sample: providerSample, scale: scale)
            let oldest = try c.query(Self.oldestDueSQL)
            let held = try c.query(Self.holdersSQL(throughIndex))
            var holders: [(worker: String, rows: Int, lapsed: Int)] = []
            for row in held.rows {
                holders.append((try row.string("locked_by") ?? "?", try row.decode(Int?.self, "rows") ?? 0, try row.decode(Int?.self, "lapsed") ?? 0))
            }
            let r = try c.query(Self.reasonsSQL, [failureMinutes])
            var reasons: [(status: String, reason: String, rows: Int)] = []
            for row in r.rows {
                reasons.append((try row.string("status") ?? "", try row.string("last_reason") ?? "", try row.decode(Int?.self, "rows") ?? 0))
            }
            let inv = try c.query("""
                SELECT invalid_reason, count(*) AS tokens FROM pushq.devices
                 WHERE pushq.token_is_invalid(registered_at, invalidated_at) GROUP BY 1 ORDER BY 2 DESC
                """)
            var invalid: [(reason: String, tokens: Int)] = []
            for row in inv.rows { invalid.append((try row.string("invalid_reason") ?? "", try row.decode(Int?.self, "tokens") ?? 0)) }
            var status = QueueStatus(counts: counts, finalCountsExact: exact, oldestDueSeconds: try oldest.rows.first?.decode(Int?.self, "seconds"),
                               holders: holders, reasons: reasons, invalidTokens: invalid, holds: try c.holdReports(),
                               workers: try c.liveWorkers(), rowsWithoutWorker: try c.rowsWithoutWorker(), lanes: try c.laneStatus(),
                               channels: try c.channelsStatus())
            status.providers = providers
            return status
        }
    }

    /// The statements of ``queueStatus(failureMinutes:)`` that read `pushq.notifications`, the
    /// very constants it runs, with example parameters: a test (`@testable`) checks their plans
    /// (no sequential scan).
    static var statusStatements: [(sql: String, parameters: [(any PGParameter)?])] {
        [(waitingCountsSQL, []), (sendingCountSQL(false), []), (finalSampleSQL, [QueueStatus.exactFinalLimit + 1]), (holdersSQL(false), []), (reasonsSQL, [60]),
         (oldestDueSQL, []), (rowsWithoutWorkerSQL, [workerLivenessSeconds]),
         (laneGaugesSQL, [dueRowsCountLimit, unconfiguredLaneLimit]), (providerWaitingSQL, []), (providerSendingSQL(false), [])]
    }

    /// Seconds since the oldest due row was due: the least of each lane's first entry of
    /// pushq.due (as ``queueGaugesSQL``).
    static let oldestDueSQL = ClaimStatement.dueLanes + """
        SELECT round(extract(epoch FROM now() - \(ClaimStatement.oldestDueAtSQL)))::bigint AS seconds
        """

    /// Waiting rows from pushq.due (each entry's `retrying`; the row's status when it
    /// is not known, read by primary key): pushq.due is read whole (an entry is some 60 bytes).
    static let waitingCountsSQL = """
        SELECT e.status, count(*) AS rows FROM (
            SELECT CASE d.retrying WHEN true THEN 'retrying' WHEN false THEN 'queued'
                                   ELSE (SELECT n.status FROM pushq.notifications n WHERE n.id = d.id) END AS status
              FROM pushq.due d) e
         WHERE e.status IN ('queued', 'retrying') GROUP BY e.status
        """

    /// The rows in flight (``inFlightSQL(_:)``).
    static func sendingCountSQL(_ throughIndex: Bool) -> String {
        "SELECT 'sending' AS status, count(*) AS rows FROM pushq.notifications WHERE \(inFlightSQL(throughIndex))"
    }

    /// The newest rows by `created_at`, at most `$1`, by status and provider, through `notifications_created`.
    static let finalSampleSQL = """
        SELECT status, provider, count(*) AS rows FROM (
            SELECT status, provider FROM pushq.notifications ORDER BY created_at DESC, id DESC LIMIT $1
        ) newest GROUP BY status, provider
        """

    /// The workers holding rows in flight (``inFlightSQL(_:)``), and how many of them lapsed.
    static func holdersSQL(_ throughIndex: Bool) -> String { """
        SELECT locked_by, count(*) AS rows, sum(CASE WHEN locked_until < now() THEN 1 ELSE 0 END) AS lapsed
          FROM pushq.notifications WHERE \(inFlightSQL(throughIndex)) GROUP BY locked_by ORDER BY 2 DESC LIMIT 10
        """ }

    /// Recent reasons: retrying rows (by `scheduled_at`, through pushq.due) and failed rows (the
    /// tally of the last `$1` minutes, pushq.outcomes).
    static let reasonsSQL = ClaimStatement.dueLanes + """
        SELECT status, last_reason, count(*)::int8 AS rows FROM pushq.notifications
         WHERE id = ANY (\(ClaimStatement.dueSinceSQL("now() - $1 * interval '1 minute'")))
           AND status = 'retrying' AND last_reason IS NOT NULL AND scheduled_at > now() - $1 * interval '1 minute'
         GROUP BY 1, 2
        UNION ALL
        SELECT 'failed', reason, sum(rows)::int8 FROM pushq.outcomes
         WHERE status = 'failed' AND reason <> '' AND minute > date_trunc('minute', now()) - $1 * interval '1 minute'
         GROUP BY 2
         ORDER BY 3 DESC, 2 LIMIT 15
        """
}
