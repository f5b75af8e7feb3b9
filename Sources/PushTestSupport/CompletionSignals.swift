import Foundation
import PushStore
import PGClient

/// A completion signal as the tests read it: the JSON payload of the `pg_notify` that the
/// trigger `notifications_notify_final` (0.4.0) sends when a row with a `notify_channel`
/// becomes final. docs/producers.md lists the same fields.
public struct CompletionSignal: Decodable, Equatable, Sendable {
    public var id: Int64
    public var status: String
    public var lastStatus: Int?
    public var lastReason: String?
    public var attempts: Int
    public var dedupeKey: String?
    public var lane: String
    public var provider: String
    public var finishedAt: String?

    public init(id: Int64, status: String, lastStatus: Int?, lastReason: String?, attempts: Int, dedupeKey: String?,
                lane: String, provider: String, finishedAt: String?) {
        self.id = id
        self.status = status
        self.lastStatus = lastStatus
        self.lastReason = lastReason
        self.attempts = attempts
        self.dedupeKey = dedupeKey
        self.lane = lane
        self.provider = provider
        self.finishedAt = finishedAt
    }

    /// Decodes a payload; throws if it is not the JSON object the trigger builds.
    public init(payload: String) throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        self = try decoder.decode(CompletionSignal.self, from: Data(payload.utf8))
    }

    /// What the signal of row `id` must say: the row as it is now, read on `db` with the same
    /// SQL functions the trigger uses (`finished_at` as `to_json` prints it).
    public static func expected(_ db: PGConnection, id: Int64) async throws -> CompletionSignal {
        let r = try await db.query("""
            SELECT status, last_status, left(last_reason, 200) AS last_reason, attempts, dedupe_key, lane, provider,
                   to_json(finished_at)#>>'{}' AS finished_at
              FROM pushq.notifications WHERE id = $1
            """, [id])
        guard r.count == 1 else { throw TestSetupError("no row \(id)") }
        let row = try r.firstRow()
        return CompletionSignal(id: id, status: try row.string("status") ?? "", lastStatus: try row.decode(Int?.self, "last_status"),
                                lastReason: try row.string("last_reason"), attempts: try row.decode(Int?.self, "attempts") ?? -1,
                                dedupeKey: try row.string("dedupe_key"), lane: try row.string("lane") ?? "",
                                provider: try row.string("provider") ?? "", finishedAt: try row.string("finished_at"))
    }

    /// The notifications `listener` receives until `done` holds for all received so far, or
    /// `timeout` passes: an event awaited, not a pause.
    public static func receive(on listener: PGConnection, timeout: Duration = .seconds(60),
                               until done: ([PGNotification]) -> Bool) async throws -> [PGNotification] {
        var received: [PGNotification] = []
        let deadline = ContinuousClock.now + timeout
        while !done(received) && ContinuousClock.now < deadline {
            received += try await listener.waitForNotifications(timeout: .milliseconds(500))
        }
        return received
    }
}
