import ArgumentParser
import Foundation
import PushCore
import PushStore
import PGClient

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enqueue one notification (an INSERT into pushq.notifications).",
        discussion: """
            The database checks the row as it would a producer's INSERT; a bad value is refused with \
            the name of the constraint it breaks. With --wait, prints the final status, the last \
            reason and the time it took, and exits 0 only if APNs accepted it.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "Device token, hex (64 to 200 digits).") var token: String
    @Option(help: "Alert text: sends {\"aps\":{\"alert\":TEXT}}.") var alert: String?
    @Option(help: "The whole payload, a JSON object, sent byte for byte.") var payload: String?
    @Option(help: "apns-push-type: \(PushType.allCases.map(\.rawValue).joined(separator: ", ")).") var pushType = "alert"
    @Option(help: "apns-topic; default: the worker's PUSHQ_APNS_TOPIC plus the push type's suffix.") var topic: String?
    @Option(help: "apns-priority: 10, 5 or 1; default 10 (5 for background).") var priority: Int?
    @Option(help: "Give up if not sent within this many seconds (apns-expiration).") var expiresIn: Int?
    @Option(help: "apns-collapse-id (at most 64 bytes).") var collapseID: String?
    @Option(help: "production or development; default: the worker's.") var environment: String?
    @Option(help: "Credential name; default: the worker's default credential.") var credential: String?
    @Flag(help: "Wait for a final status and print it.") var wait = false
    @Option(help: "With --wait, give up waiting after this many seconds.") var waitTimeout: Double = 60

    /// "refused: <server message> (constraint <name>)" for a rejected INSERT.
    static func refusal(_ error: any Error) -> String {
        guard let pg = error as? PGError else { return "refused: \(error)" }
        return "refused: \(pg.message)" + (pg.constraint.map { " (constraint \($0))" } ?? "")
    }

    func validate() throws {
        if (alert == nil) == (payload == nil) { throw ValidationError("give exactly one of --alert TEXT or --payload JSON") }
    }

    func run() async throws {
        let settings = database.settings()
        let logger = try settings.logger(label: "pushq.send")
        let body: String
        if let alert {
            let data = try JSONSerialization.data(withJSONObject: ["aps": ["alert": alert]], options: [.sortedKeys, .withoutEscapingSlashes])
            body = String(decoding: data, as: UTF8.self)
        } else {
            body = payload ?? ""
        }
        let connection = try await PGConnection.connect(try settings.databaseURL(), logger: logger)
        try await connection.closing { try await insert($0, body: body) }
    }

    /// Inserts the notification with `connection` and, with `--wait`, waits for its outcome.
    private func insert(_ connection: PGConnection, body: String) async throws {
        let id: Int64
        do {
            let result = try await connection.query("""
                INSERT INTO pushq.notifications
                    (device_token, payload, push_type, topic, priority, expires_at, collapse_id, environment, credential)
                VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 second', $7, $8, $9)
                RETURNING id
                """, [token, body, pushType, topic, priority, expiresIn, collapseID, environment, credential])
            id = try result.decode(Int64.self, 0, "id")
        } catch {
            throw CommandFailure(Self.refusal(error))
        }
        guard wait else {
            print(id)
            return
        }
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .milliseconds(Int(waitTimeout * 1000)) {
            let r = try await connection.query("""
                SELECT status, last_status, last_reason, attempts,
                       round(extract(epoch FROM (COALESCE(finished_at, now()) - created_at)) * 1000)::bigint AS ms
                  FROM pushq.notifications WHERE id = $1
                """, [id])
            let row = try r.firstRow()
            let status = try row.decode(String.self, "status")
            if ["sent", "failed", "expired", "cancelled"].contains(status) {
                let reason = try row.decode(String?.self, "last_reason")
                let http = try row.decode(Int?.self, "last_status")
                let attempts = try row.decode(Int.self, "attempts")
                let ms = try row.decode(Int64.self, "ms")
                var line = "notification \(id): \(status)"
                if let reason { line += " \(reason)" }
                if let http { line += " (HTTP \(http))" }
                line += " after \(attempts) attempt\(attempts == 1 ? "" : "s") in \(ms) ms"
                print(line)
                if status != "sent" { throw ExitCode(1) }
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let r = try await connection.query("SELECT status, last_reason FROM pushq.notifications WHERE id = $1", [id])
        let status = try r.rows.first?.decode(String.self, "status") ?? "deleted"
        let lastReason = try r.rows.first?.decode(String?.self, "last_reason") ?? nil
        let hint = Self.notFinal(status: status, lastReason: lastReason, credential: credential ?? "default",
                                 workers: try await connection.liveWorkers())
        print("notification \(id): not final after \(waitTimeout) s: \(hint)")
        throw ExitCode(2)
    }

    /// Why a row is not final yet, as far as `pushq status` would tell: no live worker at all, none
    /// serving the row's (APNs) credential, or else the row's status and last reason.
    static func notFinal(status: String, lastReason: String?, credential: String, workers: [WorkerRecord]) -> String {
        if workers.isEmpty { return "\(status), and no worker is running (start pushq worker)" }
        let served = workers.contains { $0.credentials.contains { $0.name == credential && ($0.provider ?? "apns") == "apns" } }
        if !served {
            return "\(status), waiting for credential \(credential), which no live worker serves "
                + "(start a worker with it, or check --credential; the row expires at its expires_at)"
        }
        return status + (lastReason.map { ", last reason \($0)" } ?? "") + " (pushq status shows holds and throttles)"
    }
}
