import Foundation
import PushStore

/// A worker of the previous release (schema 32, before pushq.due): its claim, as its worker sent
/// it (`Fixtures/previous-claim.sql`), which walks the status indexes of pushq.notifications and
/// knows nothing of pushq.due. Its write-back is this release's, which did not change.
enum PreviousRelease {
    /// The statement, read once; if it cannot be read, every claim throws why.
    static let claimSQL = Result {
        try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/previous-claim.sql"),
                   encoding: .utf8)
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
        let parameters: [(any PGParameter)?] = [200, workerID, leaseSeconds, "production", strings, true, none, false, 0, nil, nil, nil]
        let r = try await c.query(try claimSQL.get(), parameters)
        var rows: [Claimed] = []
        for i in 0..<r.count where r.string(i, 1) == "sending" {
            rows.append(Claimed(id: try r.decode(Int64.self, i, 0) ?? 0, attempts: try r.decode(Int.self, i, 12) ?? 0,
                                lease: try r.decode(Int64.self, i, 16) ?? 0))
        }
        return rows
    }
}
