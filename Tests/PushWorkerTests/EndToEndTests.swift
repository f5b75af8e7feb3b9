import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// A worker in this process against a real PostgreSQL and the mock over TLS.
@Suite("Worker end to end", .serialized)
struct EndToEndTests {
    @Test("a mix of kinds and faults ends in exactly the statuses the contract promises; bodies and headers are right")
    func mixOfKindsAndFaults() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.recordBodies = true }) { mock, apnsURL in
                let t = { (i: Int) in Fixtures.token(i, prefix: "c") }
                let goneAt: Int64 = 1_700_000_000_123
                mock.setRule(forToken: t(8), .always(.unregistered(at: goneAt)))
                mock.setRule(forToken: t(9), .always(.error(.badDeviceToken)))
                mock.setRule(forToken: t(10), MockTokenRule(sequence: [.error(.internalServerError), .error(.internalServerError)]))
                mock.setRule(forToken: t(12), .always(.error(.badTopic)))
                mock.setRule(forToken: t(13), .always(.error(.tooManyRequests)))
                mock.setRule(forToken: t(14), MockTokenRule(sequence: [.error(.expiredProviderToken)]))
                mock.setRule(forToken: t(15), MockTokenRule(sequence: [.reset]))

                // t(11) is already invalid; t(16) was invalidated but registered again since (valid).
                try await db.query("""
                    INSERT INTO pushq.devices (device_token, environment, registered_at, invalidated_at, invalid_reason) VALUES
                      ($1, 'development', now() - interval '2 days', now() - interval '1 day', 'Unregistered'),
                      ($2, 'development', now() - interval '1 hour', now() - interval '1 day', 'Unregistered')
                    """, [t(11), t(16)])

                func insert(_ i: Int, payload: String = #"{"aps":{"alert":"n"}}"#, _ columns: String = "", _ values: String = "",
                            _ params: [(any PGParameter)?] = []) async throws -> Int64 {
                    let sql = "INSERT INTO pushq.notifications (device_token, payload\(columns)) VALUES ($1, $2\(values)) RETURNING id"
                    return try await db.query(sql, [t(i), payload] + params).decode(Int64.self, 0, "id")
                }
                let oddPayload = "{ \"aps\" : {\"alert\":\"h\\u00e9llo ✓\"},\n  \"z\":[1, 2.50, {\"k\":null}], \"a\":\"\\\"q\\\"\" }"
                var ids: [Int: Int64] = [:]
                ids[1] = try await insert(1, payload: oddPayload)
                ids[2] = try await insert(2, payload: #"{"aps":{"content-available":1}}"#, ", push_type", ", $3", ["background"])
                ids[3] = try await insert(3, ", push_type", ", $3", ["voip"])
                ids[4] = try await insert(4, payload: #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{"n":4}}}"#,
                                          ", push_type, topic", ", $3, $4", ["liveactivity", Fixtures.topic + ".push-type.liveactivity"])
                ids[5] = try await insert(5, ", expires_at, collapse_id, priority", ", now() + interval '1 hour', $3, 5", ["c-5"])
                ids[6] = try await insert(6, ", expires_at", ", now() - interval '1 second'")
                ids[7] = try await insert(7, ", scheduled_at", ", now() + interval '1 hour'")
                try await db.query("UPDATE pushq.notifications SET status = 'cancelled' WHERE id = $1 AND status IN ('queued', 'retrying')", [ids[7]!])
                for i in 8...16 { ids[i] = try await insert(i) }
                // The largest payload APNs takes (5120 bytes, voip): the sender grows its buffer for it.
                let bigPayload = #"{"aps":{},"x":""# + String(repeating: "v", count: 5120 - 17) + #""}"#
                ids[17] = try await insert(17, payload: bigPayload, ", push_type", ", $3", ["voip"])
                try await db.query("UPDATE pushq.notifications SET max_attempts = 1 WHERE id = $1", [ids[13]!])
                // Twenty good tokens besides: enough answers for the burst detector to tell row 9's bad token from a wrong environment.
                try await insertAlerts(db, count: 20, prefix: "f")
                let expiresAt = try await db.query("SELECT floor(extract(epoch FROM expires_at))::bigint FROM pushq.notifications WHERE id = $1", [ids[5]!]).decode(Int64.self, 0, 0)

                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(60))
                }

                struct Final: Equatable { var status: String; var reason: String?; var http: Int?; var attempts: Int }
                func final(_ i: Int) async throws -> Final {
                    let r = try await db.query("SELECT status, last_reason, last_status, attempts FROM pushq.notifications WHERE id = $1", [ids[i]!])
                    return Final(status: try r.decode(String.self, 0, "status"), reason: try r.decodeOptional(String.self, 0, "last_reason"),
                                 http: try r.decodeOptional(Int.self, 0, "last_status"), attempts: try r.decode(Int.self, 0, "attempts"))
                }
                for i in [1, 2, 3, 4, 5, 16, 17] { #expect(try await final(i) == Final(status: "sent", reason: nil, http: 200, attempts: 1), "row \(i)") }
                #expect(try await final(6) == Final(status: "expired", reason: nil, http: nil, attempts: 0))
                #expect(try await final(7) == Final(status: "cancelled", reason: nil, http: nil, attempts: 0))
                #expect(try await final(8) == Final(status: "failed", reason: "Unregistered", http: 410, attempts: 1))
                // BadDeviceToken is believed only once enough answers rule out a wrong environment; until then the row
                // waits with its attempt given back: one attempt counted, whichever answer came first.
                #expect(try await final(9) == Final(status: "failed", reason: "BadDeviceToken", http: 400, attempts: 1))
                #expect(try await final(10) == Final(status: "sent", reason: nil, http: 200, attempts: 3))
                #expect(try await final(11) == Final(status: "failed", reason: "TokenInvalidated", http: nil, attempts: 0))
                #expect(try await final(12) == Final(status: "failed", reason: "BadTopic", http: 400, attempts: 1))
                #expect(try await final(13) == Final(status: "failed", reason: "TooManyRequests", http: 429, attempts: 1))
                // ExpiredProviderToken does not use up an attempt.
                #expect(try await final(14) == Final(status: "sent", reason: nil, http: 200, attempts: 1))
                // A reset stream: outcome unknown, retried with the same apns-id.
                #expect(try await final(15) == Final(status: "sent", reason: nil, http: 200, attempts: 2))

                // Sent rows carry sent_at, finished_at, apns_unique_id (development); final rows hold no lease.
                let sentShape = try await db.query("""
                    SELECT count(*) FILTER (WHERE sent_at IS NULL OR finished_at IS NULL OR apns_unique_id IS NULL),
                           count(*) FILTER (WHERE locked_by IS NOT NULL OR locked_until IS NOT NULL)
                      FROM pushq.notifications WHERE status = 'sent'
                    """)
                #expect(try sentShape.decode(Int.self, 0, 0) == 0)
                #expect(try sentShape.decode(Int.self, 0, 1) == 0)

                // Invalidations recorded in pushq.devices, with the 410 timestamp.
                let devices = try await db.query("""
                    SELECT device_token, invalid_reason, registered_at IS NULL,
                           (extract(epoch FROM invalidated_at) * 1000)::bigint
                      FROM pushq.devices WHERE device_token IN ($1, $2) ORDER BY device_token
                    """, [t(8), t(9)])
                #expect(devices.count == 2)
                #expect(devices.string(0, 1) == "Unregistered")
                #expect(try devices.decode(Int64.self, 0, 3) == goneAt)
                #expect(devices.string(0, 2) == "t")
                #expect(devices.string(1, 1) == "BadDeviceToken")

                // What the mock received: never the expired, cancelled or invalid rows; bodies byte for byte; headers.
                let requests = mock.requests()
                let byToken = Dictionary(grouping: requests, by: { $0.deviceToken ?? "" })
                for i in [6, 7, 11] { #expect(byToken[t(i)] == nil, "row \(i) must not be sent") }
                let stored = try await db.query("SELECT payload, apns_id FROM pushq.notifications WHERE id = $1", [ids[1]!])
                let first = try #require(byToken[t(1)]?.first)
                #expect(first.body == stored.bytes(0, 0))
                #expect(first.body == Array(oddPayload.utf8))
                #expect(first.header("apns-id") == stored.string(0, 1))
                #expect(first.header("apns-topic") == Fixtures.topic)
                #expect(first.header("apns-push-type") == "alert")
                #expect(first.header("apns-priority") == "10")
                #expect(first.header("apns-expiration") == nil)
                let background = try #require(byToken[t(2)]?.first)
                #expect(background.header("apns-push-type") == "background")
                #expect(background.header("apns-priority") == "5")
                #expect(background.header("apns-topic") == Fixtures.topic)
                #expect(byToken[t(3)]?.first?.header("apns-topic") == Fixtures.topic + ".voip")
                #expect(byToken[t(3)]?.first?.header("apns-push-type") == "voip")
                #expect(byToken[t(4)]?.first?.header("apns-topic") == Fixtures.topic + ".push-type.liveactivity")
                let five = try #require(byToken[t(5)]?.first)
                #expect(five.header("apns-expiration") == expiresAt.map(String.init))
                #expect(five.header("apns-collapse-id") == "c-5")
                #expect(five.header("apns-priority") == "5")
                let big = try #require(byToken[t(17)]?.first)
                #expect(big.body == Array(bigPayload.utf8))
                #expect(big.bodyLength == 5120)
                // Retries reuse the apns-id.
                let retried = try #require(byToken[t(10)])
                #expect(retried.count == 3)
                #expect(Set(retried.map { $0.header("apns-id") }).count == 1)
            }
        }
    }
}

/// The URL of the database `c` is connected to, on the test cluster.
func databaseURL(_ c: PGConnection) async throws -> String {
    let name = try await c.query("SELECT current_database()").decode(String.self, 0, 0) ?? ""
    return PGURL.withDatabase(try TestDatabase.serverURL, name)
}
