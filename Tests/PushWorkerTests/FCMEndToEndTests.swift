import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushTransport
import PushWorker
import Testing
import PGClient

/// One worker draining APNs and FCM rows from the same queue, against the mock's APNs and FCM
/// HTTP v1 endpoints (OAuth exchange included): one test per row of the FCM answers table (docs/faults.md).
@Suite("FCM end to end", .serialized)
struct FCMEndToEndTests {
    /// Registration token `i`: base64url and a colon, mixed case (FCM tokens are case-sensitive).
    static func token(_ i: Int, _ prefix: String) -> String { "\(prefix)\(i):APA91bHx_" + String(repeating: "Qz9-", count: 30) }

    /// A service account JSON file for the fixtures' key, exchanging tokens at the mock, in the
    /// process's fixtures directory (removed with it by a later run).
    static func serviceAccountFile(mockURL: String) throws -> String {
        let path = Fixtures.directory + "/fcm-sa-\(UInt32.random(in: 0...UInt32.max)).json"
        let json = try MockTestFixtures.fcmServiceAccountJSON(privateKeyPath: Fixtures.directory + "/fcm-key.pem", tokenURI: mockURL + "/token")
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The test worker configuration with FCM credentials `names` (all the fixtures' account) besides APNs `default`.
    static func configuration(_ db: PGConnection, mockURL: String, fcm names: [String] = ["default"]) async throws -> WorkerConfiguration {
        var c = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: mockURL)
        let account = try FCMServiceAccount(file: try serviceAccountFile(mockURL: mockURL))
        for name in names { c.credentials[CredentialKey(.fcm, name)] = .fcm(account) }
        c.fcm.baseURL = mockURL
        return c
    }

    struct Final: Equatable { var status: String; var reason: String?; var http: Int?; var attempts: Int }

    static func final(_ db: PGConnection, _ id: Int64) async throws -> Final {
        let r = try await db.query("SELECT status, last_reason, last_status, attempts FROM pushq.notifications WHERE id = $1", [id])
        return Final(status: try r.decode(String.self, 0, "status"), reason: try r.decodeOptional(String.self, 0, "last_reason"),
                     http: try r.decodeOptional(Int.self, 0, "last_status"), attempts: try r.decode(Int.self, 0, "attempts"))
    }

    static func insertFCM(_ db: PGConnection, _ token: String, payload: String = #"{"data":{"k":"v"}}"#,
                          credential: String? = nil, expiresAt: String = "NULL") async throws -> Int64 {
        try await db.query("""
            INSERT INTO pushq.notifications (provider, device_token, payload, credential, expires_at)
            VALUES ('fcm', $1, $2, $3, \(expiresAt)) RETURNING id
            """, [token, payload, credential]).decode(Int64.self, 0, "id")
    }

    /// mixed APNs and FCM rows: each FCM answer of the table ends the row as docs/faults.md says; bodies,
    /// message names, invalidations
    @Test("mixed APNs and FCM rows: each FCM answer ends the row as docs/faults.md says; bodies, message names, invalidations")
    func outcomeTable() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = true }) { mock, mockURL in
                let t = { (i: Int) in Self.token(i, "e") }
                mock.setFCMRule(forToken: t(1), .always(.error(.unregistered)))
                mock.setFCMRule(forToken: t(2), .always(.invalidRegistrationToken))
                mock.setFCMRule(forToken: t(3), .always(.error(.invalidArgument, message: "Invalid JSON payload received. Unknown name \"badfield\"")))
                mock.setFCMRule(forToken: t(4), MockFCMTokenRule(sequence: [.error(.unavailable, retryAfter: "1")]))
                mock.setFCMRule(forToken: t(5), MockFCMTokenRule(sequence: [.error(.internalError)]))
                mock.setFCMRule(forToken: t(6), MockFCMTokenRule(sequence: [MockFCMAnswer(kind: .error, code: "UNAUTHENTICATED")]))
                mock.setFCMRule(forToken: t(7), .always(.error(.senderIDMismatch)))

                // t(8) is already invalid for FCM; the same text registered for APNs would not matter.
                try await db.query("""
                    INSERT INTO pushq.devices (device_token, provider, registered_at, invalidated_at, invalid_reason)
                    VALUES ($1, 'fcm', now() - interval '2 days', now() - interval '1 day', 'UNREGISTERED')
                    """, [t(8)])
                let payload = #"{"notification": {"title": "Order 1042"}, "data": {"order": "1042"}, "android": {"priority": "high"}, "apns": {"payload": {"aps": {"sound": "default"}}}}"#
                var ids: [Int: Int64] = [:]
                ids[0] = try await Self.insertFCM(db, t(0), payload: payload)
                for i in 1...8 { ids[i] = try await Self.insertFCM(db, t(i)) }
                ids[9] = try await Self.insertFCM(db, t(9), expiresAt: "now() - interval '1 second'")
                // Enough good FCM answers for the burst detector to judge t(7)'s SENDER_ID_MISMATCH, and APNs rows beside.
                for i in 100..<130 { _ = try await Self.insertFCM(db, t(i)) }
                try await insertAlerts(db, count: 20, prefix: "e")

                let configuration = try await Self.configuration(db, mockURL: mockURL)
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                }
                func final(_ i: Int) async throws -> Final { try await Self.final(db, ids[i]!) }
                #expect(try await final(0) == Final(status: "sent", reason: nil, http: 200, attempts: 1))
                #expect(try await final(1) == Final(status: "failed", reason: "UNREGISTERED", http: 404, attempts: 1))
                #expect(try await final(2) == Final(status: "failed", reason: "INVALID_ARGUMENT", http: 400, attempts: 1))
                #expect(try await final(3) == Final(status: "failed", reason: "INVALID_ARGUMENT", http: 400, attempts: 1))
                #expect(try await final(4) == Final(status: "sent", reason: nil, http: 200, attempts: 2))
                #expect(try await final(5) == Final(status: "sent", reason: nil, http: 200, attempts: 2))
                // 401: the sender refreshed the access token and resent; the worker never saw it.
                #expect(try await final(6) == Final(status: "sent", reason: nil, http: 200, attempts: 1))
                #expect(try await final(7) == Final(status: "failed", reason: "SENDER_ID_MISMATCH", http: 403, attempts: 1))
                #expect(try await final(8) == Final(status: "failed", reason: "TokenInvalidated", http: nil, attempts: 0))
                #expect(try await final(9).status == "expired")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE provider = 'apns' AND status = 'sent'") == 20)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE provider = 'fcm' AND status = 'sent'") == 34)

                // Message names recorded for every FCM row sent, none for APNs rows.
                #expect(try await scalar(db, """
                    SELECT count(*) FROM pushq.notifications
                     WHERE provider = 'fcm' AND status = 'sent' AND fcm_message_name LIKE 'projects/pushq-test/messages/%'
                    """) == 34)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE provider = 'apns' AND fcm_message_name IS NOT NULL") == 0)

                // The token UNREGISTERED and the token INVALID_ARGUMENT named are invalid for FCM, case kept; t(3) is not.
                let invalid = try await db.query("""
                    SELECT device_token, invalid_reason FROM pushq.devices
                     WHERE provider = 'fcm' AND invalidated_at IS NOT NULL AND device_token <> $1 ORDER BY invalid_reason DESC
                    """, [t(8)])
                #expect(invalid.count == 2)
                #expect(invalid.string(0, 0) == t(1) && invalid.string(0, 1) == "UNREGISTERED")
                #expect(invalid.string(1, 0) == t(2) && invalid.string(1, 1) == "INVALID_ARGUMENT")

                // The body is {"message":{"token":…, the payload's members byte for byte}}, sent to the credential's project.
                let sent = mock.fcmRequests().filter { $0.endpoint == "send" && $0.registrationToken == t(0) }
                #expect(sent.count == 1)
                let expectedBody = #"{"message":{"token":""# + t(0) + #"","# + payload.dropFirst() + "}"
                #expect(sent.first?.body.map { String(decoding: $0, as: UTF8.self) } == expectedBody)
                #expect(sent.first?.projectID == "pushq-test")
            }
        }
    }

    /// an FCM row the table's checks would refuse (written around them) ends failed/InvalidPayload, nothing
    /// sent; the rest go out
    @Test("an FCM row the table's checks would refuse ends failed/InvalidPayload, nothing sent; the rest go out")
    func invalidPayload() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let t = { (i: Int) in Self.token(i, "v") }
                // As a producer could have written before the check existed: a payload naming its own target.
                let bad = try await TableRules.off(db) { try await Self.insertFCM(db, t(0), payload: #"{"token":"someone-else","data":{"k":"v"}}"#) }
                let good = try await Self.insertFCM(db, t(1))
                let configuration = try await Self.configuration(db, mockURL: mockURL)
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                #expect(try await Self.final(db, bad) == Final(status: "failed", reason: "InvalidPayload", http: nil, attempts: 1))
                #expect(try await Self.final(db, good) == Final(status: "sent", reason: nil, http: 200, attempts: 1))
                #expect(mock.fcmRequests().filter { $0.endpoint == "send" }.map(\.registrationToken) == [t(1)])
            }
        }
    }

    @Test("QUOTA_EXCEEDED holds the whole FCM credential for Retry-After, attempts given back; then everything goes out")
    func quota() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let t = { (i: Int) in Self.token(i, "q") }
                mock.setFCMRule(forToken: t(0), MockFCMTokenRule(sequence: [.error(.quotaExceeded, retryAfter: "2")]))
                let first = try await Self.insertFCM(db, t(0))
                let configuration = try await Self.configuration(db, mockURL: mockURL)
                try await withWorker(configuration) { _ in
                    // The hold appears for the FCM channel, with FCM's reason, and lasts about Retry-After.
                    let held = try await eventually(timeout: .seconds(20)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses WHERE credential = 'default' AND environment = 'fcm' AND reason = 'QUOTA_EXCEEDED'") == 1
                    }
                    #expect(held)
                    let heldFor = try await db.query("SELECT extract(epoch FROM paused_until - paused_at)::float8 FROM pushq.credential_pauses WHERE environment = 'fcm'").decode(Double.self, 0, 0) ?? 0
                    #expect(heldFor >= 1.9 && heldFor <= 3, "held \(heldFor) s for Retry-After 2")
                    // Rows of the held credential wait; APNs rows of the credential with the same name do not.
                    for i in 1...5 { _ = try await Self.insertFCM(db, t(i)) }
                    try await insertAlerts(db, count: 5, prefix: "9")
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                #expect(try await Self.final(db, first) == Final(status: "sent", reason: nil, http: 200, attempts: 1))
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 11)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0)
            }
        }
    }

    /// PERMISSION_DENIED pauses that FCM credential with a message saying what to fix; its rows wait,
    /// attempts given back; other credentials go on
    @Test("PERMISSION_DENIED pauses that FCM credential saying what to fix; its rows wait, attempts back; others go on")
    func permissionDenied() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let t = { (i: Int) in Self.token(i, "p") }
                for i in 0..<3 { mock.setFCMRule(forToken: t(i), .always(.error(.permissionDenied))) }
                var denied: [Int64] = []
                for i in 0..<3 { denied.append(try await Self.insertFCM(db, t(i), credential: "android")) }
                let other = try await Self.insertFCM(db, t(10))
                let configuration = try await Self.configuration(db, mockURL: mockURL, fcm: ["default", "android"])
                try await withWorker(configuration) { _ in
                    let paused = try await eventually(timeout: .seconds(20)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses WHERE credential = 'android' AND environment = 'fcm' AND kind = 'credential' AND reason = 'PERMISSION_DENIED'") == 1
                    }
                    #expect(paused)
                    let message = try await db.query("SELECT message FROM pushq.credential_pauses WHERE credential = 'android'").string(0, 0) ?? ""
                    #expect(message.contains("Firebase Cloud Messaging API Admin"))
                    #expect(try await eventually { try await Self.final(db, other).status == "sent" })
                }
                for id in denied {
                    let f = try await Self.final(db, id)
                    #expect(f.status == "retrying" && f.attempts == 0 && f.reason == "PERMISSION_DENIED", "\(f)")
                }
            }
        }
    }
}
