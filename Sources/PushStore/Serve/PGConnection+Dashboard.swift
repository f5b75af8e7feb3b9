import Foundation
import PGClient

/// Sends, failures and token invalidations per minute over the last hour: the dashboard's chart.
public struct MinuteSeries: Sendable, Equatable {
    public struct Minute: Sendable, Equatable {
        /// The minute's start.
        public var start: Date
        public var sent: Int
        public var failed: Int
        /// Failed rows whose reason invalidated the device's token (``MinuteSeries/invalidationReasons``).
        public var invalidated: Int

        public init(start: Date, sent: Int, failed: Int, invalidated: Int) {
            self.start = start
            self.sent = sent
            self.failed = failed
            self.invalidated = invalidated
        }
    }

    /// The last ``minutes`` minutes, oldest first, the current (partial) minute last; a minute
    /// without rows is there with zeros.
    public var minutes: [Minute]
    public init(minutes: [Minute]) {
        self.minutes = minutes
    }

    /// How many minutes the chart covers.
    public static let minutes = 60
    /// At most this many rows (the newest by `created_at`) are read for a list of failed rows.
    public static let rowLimit = 500_000
    /// The reasons a failed row ends with when its answer invalidated the token: APNs' 410 and
    /// `BadDeviceToken` (`PushCore/Policy/Outcome.swift`), FCM's `UNREGISTERED`
    /// (`FCM/FCMVerdict.swift`). FCM's `INVALID_ARGUMENT` is left out: it also ends rows whose
    /// payload FCM refused, which invalidate nothing.
    public static let invalidationReasons = ["Unregistered", "ExpiredToken", "BadDeviceToken", "UNREGISTERED"]
}

/// The reasons rows failed with in a window, most frequent first.
public struct FailureReasons: Sendable, Equatable {
    /// The window, in minutes.
    public var minutes: Int
    public var reasons: [Reason]
    public struct Reason: Sendable, Equatable {
        public var reason: String
        public var rows: Int
    }

    /// At most this many reasons are listed.
    public static let reasonLimit = 50
}

extension PGConnection {
    /// The chart of the overview: ``MinuteSeries`` of the last hour, from the tally
    /// (pushq.outcomes).
    public func minuteSeries() throws(PGError) -> MinuteSeries {
        let r = try query(Self.minuteSeriesSQL, [MinuteSeries.invalidationReasons, MinuteSeries.minutes])
        var minutes: [MinuteSeries.Minute] = []
        for row in r.rows {
            minutes.append(MinuteSeries.Minute(start: Date(timeIntervalSince1970: try row.decode(Double?.self, "start") ?? 0),
                                               sent: try row.decode(Int?.self, "sent") ?? 0, failed: try row.decode(Int?.self, "failed") ?? 0,
                                               invalidated: try row.decode(Int?.self, "invalidated") ?? 0))
        }
        return MinuteSeries(minutes: minutes)
    }

    /// The reasons of the rows that failed in the last `minutes` minutes (whole minutes of the
    /// tally, the current one included), with their counts.
    public func failureReasons(minutes: Int) throws(PGError) -> FailureReasons {
        let r = try query(Self.failureReasonsSQL, [minutes, FailureReasons.reasonLimit])
        var reasons: [FailureReasons.Reason] = []
        for row in r.rows {
            reasons.append(FailureReasons.Reason(reason: try row.string("reason") ?? "", rows: try row.decode(Int?.self, "rows") ?? 0))
        }
        return FailureReasons(minutes: minutes, reasons: reasons)
    }

    /// The newest rows that failed with `reason` in the last `minutes` minutes, at most `limit`
    /// (among the newest ``MinuteSeries/rowLimit`` rows of the table).
    public func failedRows(reason: String, minutes: Int, limit: Int) throws(PGError) -> [NotificationSummary] {
        try NotificationSummary.decode(readThroughIndexes(Self.failedRowsSQL, [reason, minutes, limit, MinuteSeries.rowLimit]))
    }

    /// The tally of every minute of the chart's window (`$2` minutes, the current one last):
    /// rows sent, failed, and failed with a reason that invalidates a token (`$1`).
    static let minuteSeriesSQL = """
        SELECT extract(epoch FROM m.minute)::float8 AS start,
               COALESCE(sum(o.rows) FILTER (WHERE o.status = 'sent'), 0)::int8 AS sent,
               COALESCE(sum(o.rows) FILTER (WHERE o.status = 'failed'), 0)::int8 AS failed,
               COALESCE(sum(o.rows) FILTER (WHERE o.status = 'failed' AND o.reason = ANY ($1::text[])), 0)::int8 AS invalidated
          FROM generate_series(date_trunc('minute', now()) - ($2 - 1) * interval '1 minute', date_trunc('minute', now()),
                               interval '1 minute') m(minute)
          LEFT JOIN pushq.outcomes o ON o.status IN ('sent', 'failed') AND o.minute = m.minute
         GROUP BY m.minute ORDER BY m.minute
        """

    /// Reasons of the rows failed in the minutes of the tally that began in the last `$1`
    /// minutes (the current one included), `$2` reasons at most, most frequent first.
    static let failureReasonsSQL = """
        SELECT reason, sum(rows)::int8 AS rows FROM pushq.outcomes
         WHERE status = 'failed' AND minute > date_trunc('minute', now()) - $1 * interval '1 minute'
         GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $2
        """

    /// Rows that failed with reason `$1` in the last `$2` minutes, among the newest
    /// ``MinuteSeries/rowLimit`` rows (`$4`, whatever their status) by `created_at`
    /// (`notifications_created`, read backwards until `$3` are found), newest first.
    static let failedRowsSQL = """
        SELECT \(NotificationSummary.columns) FROM (
            SELECT \(NotificationSummary.columns) FROM pushq.notifications ORDER BY created_at DESC, id DESC LIMIT $4
        ) newest
         WHERE status = 'failed' AND COALESCE(last_reason, '') = $1 AND finished_at > now() - $2 * interval '1 minute' LIMIT $3
        """
}
