import Foundation
@testable import PushStore
import PGClient

/// A worker of the previous release, 0.3.0 (schema 11): its claim (`Fixtures/release-0.3.0-claim.sql`),
/// which walks the status indexes of pushq.notifications and knows nothing of lanes, pushq.due or
/// pushq.leases, and its fenced write-back (`Fixtures/release-0.3.0-complete.sql`), which knows
/// nothing of pushq.outcomes: the statements of commit b175a92, as its worker sent them.
enum PreviousRelease {
    /// The statements, read once; if one cannot be read, every use throws why.
    static let claimSQL = Result { try fixture("release-0.3.0-claim.sql") }
    static let completeSQL = Result { try fixture("release-0.3.0-complete.sql") }

    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/" + name),
                   encoding: .utf8)
    }

    /// Writes back `completions` as its worker `workerID` did (in a transaction of its own);
    /// returns the rows updated.
    static func complete(_ c: PGConnection, _ completions: [RowCompletion], workerID: String) async throws -> Int {
        let sql = try completeSQL.get()
        try await c.execute("BEGIN")
        do {
            let n = try await c.query(sql, PGConnection.completeParameters(completions, workerID: workerID)).affectedRows
            try await c.execute("COMMIT")
            return n
        } catch {
            try? await c.execute("ROLLBACK")
            throw error
        }
    }

    /// A row it claimed: what its write-back needs.
    struct Claimed: Sendable {
        var id: Int64
        var attempts: Int
        var lease: Int64
    }

    /// Claims up to 200 rows of the default APNs credential as worker `workerID`.
    static func claim(_ c: PGConnection, workerID: String, leaseSeconds: Double) async throws -> [Claimed] {
        let strings: [String] = ["default"]
        let none: [String] = []
        let parameters: [(any PGParameter)?] = [200, workerID, leaseSeconds, "production", strings, true, none, false]
        let r = try await c.query(try claimSQL.get(), parameters)
        var rows: [Claimed] = []
        for i in 0..<r.count where r.string(i, 1) == "sending" {
            rows.append(Claimed(id: try r.decode(Int64.self, i, 0) ?? 0, attempts: try r.decode(Int.self, i, 12) ?? 0,
                                lease: try r.decode(Int64.self, i, 16) ?? 0))
        }
        return rows
    }
}
