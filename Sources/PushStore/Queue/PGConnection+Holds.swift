import Foundation
import PushCore
import PGClient

/// An endpoint held back (a row of `pushq.credential_pauses`).
public struct HeldEndpoint: Sendable, Hashable {
    public var endpoint: Endpoint
    public var kind: HoldKind
    public var reason: String
    /// Probes taken so far, plus one (1 for a new hold).
    public var failures: Int
    /// Whether its next probe is due (`paused_until <= now()`).
    public var probeDue: Bool

    public init(endpoint: Endpoint, kind: HoldKind, reason: String, failures: Int = 1, probeDue: Bool = false) {
        self.endpoint = endpoint
        self.kind = kind
        self.reason = reason
        self.failures = failures
        self.probeDue = probeDue
    }
}

/// A hold as `pushq status` shows it.
public struct HoldReport: Sendable {
    public var held: HeldEndpoint
    public var message: String
    /// When the next probe may go out.
    public var nextProbe: Date
}

extension PGConnection {
    /// Every held endpoint, with whether its probe is due: the claim skips them all, and
    /// takes the due probes (``takeProbe(_:failures:seconds:workerID:)``).
    public func holds() throws(PGError) -> [HeldEndpoint] {
        let r = try query("""
            SELECT credential, environment, kind, reason, failures, paused_until <= now()
              FROM pushq.credential_pauses ORDER BY credential, environment
            """)
        return try Self.decodeHolds(r)
    }

    /// Takes the due probe of `endpoint` for this worker: moves its next probe `seconds` ahead
    /// and counts it, if no other worker did since `failures` was read.
    ///
    /// - Returns: whether this worker is to send the probe.
    public func takeProbe(_ endpoint: Endpoint, failures: Int, seconds: Double, workerID: String) throws(PGError) -> Bool {
        try query("""
            UPDATE pushq.credential_pauses
               SET paused_until = now() + $3 * interval '1 second', failures = failures + 1, paused_by = $5
             WHERE credential = $1 AND environment = $2 AND failures = $4 AND paused_until <= now()
            """, [endpoint.credential, endpoint.channel, seconds, failures, workerID]).affectedRows == 1
    }

    /// Lifts the hold of `endpoint` that this worker's probe found nothing to send with (no
    /// due rows): the next claim of its rows judges it afresh. Fenced by `failures` (the value
    /// after the probe was taken), so a hold written since stands.
    public func liftIdleHold(_ endpoint: Endpoint, failures: Int) throws(PGError) {
        try query("DELETE FROM pushq.credential_pauses WHERE credential = $1 AND environment = $2 AND failures = $3",
                  [endpoint.credential, endpoint.channel, failures])
    }

    /// The holds with their messages and next probe, for `pushq status`.
    public func holdReports() throws(PGError) -> [HoldReport] {
        let r = try query("""
            SELECT credential, environment, kind, reason, failures, paused_until <= now(), message, paused_until
              FROM pushq.credential_pauses ORDER BY kind, credential, environment
            """)
        var out: [HoldReport] = []
        for (i, h) in try Self.decodeHoldRows(r) {
            out.append(HoldReport(held: h, message: r.string(i, 6) ?? "", nextProbe: try r.decode(Date.self, i, 7) ?? Date()))
        }
        return out
    }

    static func decodeHolds(_ r: PGResult) throws(PGError) -> [HeldEndpoint] {
        try decodeHoldRows(r).map(\.held)
    }

    /// The holds of `r` with the index of the row each came from (rows naming an unknown
    /// environment (channel) or kind are passed over).
    private static func decodeHoldRows(_ r: PGResult) throws(PGError) -> [(row: Int, held: HeldEndpoint)] {
        var out: [(row: Int, held: HeldEndpoint)] = []
        for i in 0..<r.count {
            guard let endpoint = Endpoint(credential: r.string(i, 0) ?? "", channel: r.string(i, 1) ?? ""),
                  let kind = HoldKind(rawValue: r.string(i, 2) ?? "") else { continue }
            out.append((i, HeldEndpoint(endpoint: endpoint, kind: kind,
                                        reason: r.string(i, 3) ?? "",
                                        failures: r.columnCount > 4 ? try r.decode(Int.self, i, 4) ?? 1 : 1,
                                        probeDue: r.columnCount > 5 ? try r.decode(Bool.self, i, 5) ?? false : false)))
        }
        return out
    }
}
