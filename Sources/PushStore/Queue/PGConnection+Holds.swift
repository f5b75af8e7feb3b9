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
            SELECT credential, environment, kind, reason, failures, paused_until <= now() AS probe_due
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
            SELECT credential, environment, kind, reason, failures, paused_until <= now() AS probe_due, message, paused_until
              FROM pushq.credential_pauses ORDER BY kind, credential, environment
            """)
        var out: [HoldReport] = []
        for (row, h) in try Self.decodeHoldRows(r) {
            out.append(HoldReport(held: h, message: try row.string("message") ?? "", nextProbe: try row.decode(Date?.self, "paused_until") ?? Date()))
        }
        return out
    }

    static func decodeHolds(_ r: PGResult) throws(PGError) -> [HeldEndpoint] {
        try decodeHoldRows(r).map(\.held)
    }

    /// The holds of `r` with the row each came from (rows naming an unknown environment
    /// (channel) or kind are passed over). `failures` and `probe_due` are optional columns (a
    /// lift returns neither): 1 and false without them.
    private static func decodeHoldRows(_ r: PGResult) throws(PGError) -> [(row: PGRow, held: HeldEndpoint)] {
        var out: [(row: PGRow, held: HeldEndpoint)] = []
        let rows = r.rows
        let failures = try? rows.column("failures"), probeDue = try? rows.column("probe_due")
        for row in rows {
            guard let endpoint = Endpoint(credential: try row.string("credential") ?? "", channel: try row.string("environment") ?? ""),
                  let kind = HoldKind(rawValue: try row.string("kind") ?? "") else { continue }
            out.append((row, HeldEndpoint(endpoint: endpoint, kind: kind,
                                          reason: try row.string("reason") ?? "",
                                          failures: try failures.map { c throws(PGError) in try row.decode(Int?.self, c) ?? 1 } ?? 1,
                                          probeDue: try probeDue.map { c throws(PGError) in try row.decode(Bool?.self, c) ?? false } ?? false)))
        }
        return out
    }
}
