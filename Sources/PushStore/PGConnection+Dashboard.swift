import Foundation

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
    /// More than ``rowLimit`` rows finished in the hour: only the newest were read, and the
    /// oldest minutes are short.
    public var truncated: Bool

    public init(minutes: [Minute], truncated: Bool) {
        self.minutes = minutes
        self.truncated = truncated
    }

    /// How many minutes the chart covers.
    public static let minutes = 60
    /// At most this many final rows are read for the chart (the newest).
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
    /// More than ``MinuteSeries/rowLimit`` rows finished in the window: the counts are those of
    /// the newest only (at least these many).
    public var truncated: Bool

    public struct Reason: Sendable, Equatable {
        public var reason: String
        public var rows: Int
    }

    /// At most this many reasons are listed.
    public static let reasonLimit = 50
}

extension PGConnection {
    /// The chart of the overview: ``MinuteSeries`` of the last hour, read through
    /// `notifications_finished` (the newest final rows, at most ``MinuteSeries/rowLimit``).
    public func minuteSeries() throws(PGError) -> MinuteSeries {
        let r = try query(Self.minuteSeriesSQL, [MinuteSeries.rowLimit, MinuteSeries.invalidationReasons, MinuteSeries.minutes])
        var minutes: [MinuteSeries.Minute] = []
        var read = 0
        for i in 0..<r.count {
            minutes.append(MinuteSeries.Minute(start: Date(timeIntervalSince1970: try r.decode(Double.self, i, 0) ?? 0),
                                               sent: try r.decode(Int.self, i, 1) ?? 0, failed: try r.decode(Int.self, i, 2) ?? 0,
                                               invalidated: try r.decode(Int.self, i, 3) ?? 0))
            read = try r.decode(Int.self, i, 4) ?? 0
        }
        return MinuteSeries(minutes: minutes, truncated: read >= MinuteSeries.rowLimit)
    }

    /// The reasons of the rows that failed in the last `minutes` minutes, with their counts.
    public func failureReasons(minutes: Int) throws(PGError) -> FailureReasons {
        let r = try query(Self.failureReasonsSQL, [minutes, MinuteSeries.rowLimit, FailureReasons.reasonLimit])
        var reasons: [FailureReasons.Reason] = []
        var read = 0
        for i in 0..<r.count {
            reasons.append(FailureReasons.Reason(reason: r.string(i, 0) ?? "", rows: try r.decode(Int.self, i, 1) ?? 0))
            read = try r.decode(Int.self, i, 2) ?? 0
        }
        return FailureReasons(minutes: minutes, reasons: reasons, truncated: read >= MinuteSeries.rowLimit)
    }

    /// The newest rows that failed with `reason` in the last `minutes` minutes, at most `limit`
    /// (among the newest ``MinuteSeries/rowLimit`` final rows of the window).
    public func failedRows(reason: String, minutes: Int, limit: Int) throws(PGError) -> [NotificationSummary] {
        try NotificationSummary.decode(query(Self.failedRowsSQL, [reason, minutes, limit, MinuteSeries.rowLimit]))
    }

    /// The newest final rows of the chart's window (`$1` at most), through `notifications_finished`
    /// read backwards, counted per minute against every minute of the window (`$3`); `$2` the
    /// reasons that invalidate a token. The last column is how many rows were read.
    static let minuteSeriesSQL = """
        WITH newest AS (
            SELECT finished_at, status, last_reason FROM pushq.notifications
             WHERE status IN ('sent', 'failed', 'expired', 'cancelled')
               AND finished_at >= date_trunc('minute', now()) - ($3 - 1) * interval '1 minute'
             ORDER BY finished_at DESC, created_at DESC LIMIT $1
        )
        SELECT extract(epoch FROM m.minute)::float8,
               count(n.status) FILTER (WHERE n.status = 'sent'),
               count(n.status) FILTER (WHERE n.status = 'failed'),
               count(n.status) FILTER (WHERE n.status = 'failed' AND n.last_reason = ANY($2::text[])),
               (SELECT count(*) FROM newest)
          FROM generate_series(date_trunc('minute', now()) - ($3 - 1) * interval '1 minute', date_trunc('minute', now()),
                               interval '1 minute') m(minute)
          LEFT JOIN newest n ON date_trunc('minute', n.finished_at) = m.minute
         GROUP BY m.minute ORDER BY m.minute
        """

    /// Reasons of failed rows among the newest final rows of the last `$1` minutes (`$2` at
    /// most, through `notifications_finished`), `$3` reasons at most; the last column is how many
    /// rows were read.
    static let failureReasonsSQL = """
        WITH newest AS (
            SELECT status, last_reason FROM pushq.notifications
             WHERE status IN ('sent', 'failed', 'expired', 'cancelled') AND finished_at > now() - $1 * interval '1 minute'
             ORDER BY finished_at DESC, created_at DESC LIMIT $2
        )
        SELECT COALESCE(last_reason, ''), count(*), (SELECT count(*) FROM newest)
          FROM newest WHERE status = 'failed' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $3
        """

    /// Failed rows of reason `$1` among the newest final rows of the last `$2` minutes (at most
    /// ``MinuteSeries/rowLimit``, `$4`), newest first, `$3` at most: `notifications_finished` is
    /// read backwards until `$3` are found.
    static let failedRowsSQL = """
        SELECT \(NotificationSummary.columns) FROM (
            SELECT \(NotificationSummary.columns) FROM pushq.notifications
             WHERE status IN ('sent', 'failed', 'expired', 'cancelled') AND finished_at > now() - $2 * interval '1 minute'
             ORDER BY finished_at DESC, created_at DESC LIMIT $4
        ) newest
         WHERE status = 'failed' AND COALESCE(last_reason, '') = $1 LIMIT $3
        """
}
