import PushCore
import PGClient

/// One provider's rows by status, as `pushq status` and the dashboard show them beside the totals.
public struct ProviderRows: Sendable, Hashable {
    public var provider: Provider
    /// Rows per status, all seven statuses present; final ones estimated as the totals are
    /// (``QueueStatus/finalCountsExact``).
    public var counts: [String: Int]

    public init(provider: Provider, counts: [String: Int]) {
        self.provider = provider
        self.counts = counts
    }
}

extension QueueStatus {
    /// The holds of Web Push origins (their ``Endpoint/origin``; the credential as a whole when
    /// nil): shown on their own, an origin being where the push service is.
    public var webPushHolds: [HoldReport] { holds.filter { $0.held.endpoint.provider == .webpush } }
    /// The holds of APNs and FCM endpoints.
    public var otherHolds: [HoldReport] { holds.filter { $0.held.endpoint.provider != .webpush } }
}

extension PGConnection {
    /// The rows of each provider that has any, in ``Provider`` order: the open rows counted
    /// exactly (waiting rows through pushq.due by primary key, as ``rowsWithoutWorkerSQL``; rows
    /// in flight as the totals count them), the final ones from the same newest rows the totals
    /// read (`sample`, by provider and status), scaled by `scale` when those are estimates.
    func providerRows(throughIndex: Bool, sample: [Provider: [String: Int]], scale: Double?) throws(PGError) -> [ProviderRows] {
        var counts: [Provider: [String: Int]] = [:]
        for part in [try query(Self.providerWaitingSQL), try query(Self.providerSendingSQL(throughIndex))] {
            for row in part.rows {
                guard let provider = Provider(rawValue: try row.string("provider") ?? "") else { continue }
                counts[provider, default: [:]][try row.string("status") ?? "", default: 0] += try row.decode(Int?.self, "rows") ?? 0
            }
        }
        for (provider, statuses) in sample {
            for (status, n) in statuses {
                counts[provider, default: [:]][status] = scale.map { Int((Double(n) * $0).rounded()) } ?? n
            }
        }
        return Provider.allCases.compactMap { provider in
            guard let found = counts[provider], found.values.contains(where: { $0 > 0 }) else { return nil }
            var all = Dictionary(uniqueKeysWithValues: QueueStatus.statuses.map { ($0, 0) })
            for (status, n) in found where all[status] != nil { all[status] = n }
            return ProviderRows(provider: provider, counts: all)
        }
    }

    /// Waiting rows by provider: each entry of pushq.due read by primary key (pushq.due has no
    /// provider), the rows queued or retrying (an entry of a lapsed lease is `sending`).
    static let providerWaitingSQL = """
        SELECT n.provider, n.status, count(*) AS rows FROM pushq.notifications n
         WHERE n.id = ANY (ARRAY(SELECT d.id FROM pushq.due d)) AND n.status IN ('queued', 'retrying')
         GROUP BY 1, 2
        """

    /// The rows in flight (``inFlightSQL(_:)``) by provider.
    static func providerSendingSQL(_ throughIndex: Bool) -> String {
        "SELECT provider, 'sending' AS status, count(*) AS rows FROM pushq.notifications WHERE \(inFlightSQL(throughIndex)) GROUP BY 1"
    }
}
