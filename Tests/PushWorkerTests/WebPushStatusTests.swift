import ChildProcess
import Foundation
import PushCore
import PushStore
import PushTestSupport
import PGClient
import Testing

/// `pushq status` shows Web Push rows and holds as their own (issue 47): the rows of each provider
/// by status, and each held origin on a line of its own, in the text and in `--json`. Rows and holds
/// are made in SQL as a producer and a worker would leave them.
@Suite("pushq status: Web Push")
struct WebPushStatusTests {
    static let keys = #"{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}"#

    /// Web Push rows: 2 queued, 1 retrying, 3 sent, 1 failed; APNs rows: 1 queued, 1 sent. A Web Push
    /// credential hold at one origin (a 403 there) and an APNs outage.
    static func makeRowsAndHolds(_ db: PGConnection) async throws {
        try await db.query("""
            INSERT INTO pushq.notifications (provider, device_token, webpush_keys, payload, status, finished_at, last_reason)
            SELECT 'webpush', 'https://push.example:8443/s/' || g, $1::jsonb, '{"title":"hi"}', s,
                   CASE WHEN s IN ('sent', 'failed') THEN now() END, CASE WHEN s = 'failed' THEN 'Gone' END
              FROM unnest(ARRAY['queued', 'queued', 'retrying', 'sent', 'sent', 'sent', 'failed']) WITH ORDINALITY AS t(s, g)
            """, [Self.keys])
        try await db.query("""
            INSERT INTO pushq.notifications (device_token, payload, status, finished_at)
            VALUES (repeat('ab', 32), '{"aps":{}}', 'queued', NULL), (repeat('cd', 32), '{"aps":{}}', 'sent', now())
            """)
        try await db.query("""
            INSERT INTO pushq.credential_pauses (credential, environment, kind, reason, message, paused_until)
            VALUES ('default', 'https://push.example:8443', 'credential', 'Forbidden', 'the push service refused the VAPID key', now() + interval '40 seconds'),
                   ('default', 'production', 'outage', 'TransportConnectFailed', 'APNs is unreachable', now() + interval '40 seconds')
            """)
    }

    func pushq(_ arguments: [String], databaseURL: String) async throws -> (ChildProcess.Termination, String, String) {
        var env = ProcessInfo.processInfo.environment
        env["PUSHQ_DATABASE_URL"] = databaseURL
        return try await ChildProcess.run(pushqBinary, arguments, environment: env)
    }

    /// The text: a line per provider with its rows by status; the Web Push hold on a line of its own
    /// naming its origin, reason and next probe, and not among the paused credentials; the APNs
    /// outage where it was.
    @Test("text: Web Push rows by status beside APNs; each held origin as 'Web Push hold: ORIGIN — reason', apart from APNs holds")
    func text() async throws {
        try await TestDatabase.withConnection { db in
            try await Self.makeRowsAndHolds(db)
            let (termination, out, err) = try await pushq(["status"], databaseURL: try await databaseURL(db))
            #expect(termination == .exit(0), "\(err)")
            let lines = out.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let web = try #require(lines.first { $0.hasPrefix("Web Push ") && $0.contains("queued") }, "\(out)")
            for figure in ["queued 2", "sending 0", "retrying 1", "sent 3", "failed 1", "expired 0", "cancelled 0"] {
                #expect(web.contains(figure), "\(web)")
            }
            let apns = try #require(lines.first { $0.hasPrefix("APNs ") && $0.contains("queued") }, "\(out)")
            #expect(apns.contains("queued 1") && apns.contains("sent 1"), "\(apns)")
            #expect(!lines.contains { $0.hasPrefix("FCM ") && $0.contains("queued") }, "a provider without rows is left out: \(out)")
            let hold = try #require(lines.first { $0.hasPrefix("Web Push hold: https://push.example:8443 — Forbidden") }, "\(out)")
            #expect(hold.contains("next probe in") && hold.contains("credential default") && hold.hasSuffix("the push service refused the VAPID key"))
            #expect(lines.contains("paused credentials: none"), "the Web Push hold is not listed as an APNs credential: \(out)")
            #expect(lines.contains { $0.hasPrefix("default (production): TransportConnectFailed") }, "\(out)")
            #expect(!lines.contains { $0.hasPrefix("default (https://") }, "\(out)")
        }
    }

    /// `--json`: `providers` has each provider's seven statuses; each hold names its `provider`, and
    /// a Web Push hold its `origin` (null for the others).
    @Test("--json: providers.webpush counts every status; a Web Push hold carries provider webpush and its origin")
    func json() async throws {
        try await TestDatabase.withConnection { db in
            try await Self.makeRowsAndHolds(db)
            let (termination, out, err) = try await pushq(["status", "--json"], databaseURL: try await databaseURL(db))
            #expect(termination == .exit(0), "\(err)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
            let providers = try #require(object["providers"] as? [String: [String: Int]], "\(out)")
            #expect(providers["webpush"] == ["queued": 2, "sending": 0, "retrying": 1, "sent": 3, "failed": 1, "expired": 0, "cancelled": 0])
            #expect(providers["apns"]?["queued"] == 1 && providers["apns"]?["sent"] == 1 && providers["fcm"] == nil)
            let holds = try #require(object["holds"] as? [[String: Any]])
            let web = try #require(holds.first { $0["provider"] as? String == "webpush" }, "\(out)")
            #expect(web["origin"] as? String == "https://push.example:8443" && web["reason"] as? String == "Forbidden")
            let apns = try #require(holds.first { $0["provider"] as? String == "apns" }, "\(out)")
            #expect(apns["origin"] is NSNull && apns["environment"] as? String == "production")
        }
    }
}
