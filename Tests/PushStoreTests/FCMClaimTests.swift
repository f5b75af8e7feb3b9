import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// Claiming and writing back mixed APNs and FCM rows: credentials per provider, holds and probes
/// by (credential, channel), the invalid-token check per provider (case-sensitive for FCM), no
/// throttles for FCM, fcm_message_name written back.
@Suite("FCM claim and write-back")
struct FCMClaimTests {
    static let fcmToken = "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1-Xy"
    static func hex(_ c: Character) -> String { String(repeating: String(c), count: 64) }

    func claim(_ c: PGConnection, apns: [String] = ["default"], fcm: [String] = ["default"],
               only: Endpoint? = nil) async throws -> [ClaimedNotification] {
        try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: apns, .fcm: fcm],
                          defaultEnvironment: .development, only: only).rows
    }

    /// One row of each (provider, credential) pair: APNs default (NULL), APNs `a`, FCM default (NULL), FCM `f`.
    static func insertMixed(_ c: PGConnection) async throws {
        try await c.query("""
            INSERT INTO pushq.notifications (provider, device_token, payload, credential) VALUES
              ('apns', $1, '{"aps":{}}', NULL),
              ('apns', $2, '{"aps":{}}', 'a'),
              ('fcm', 'fcm-default:1', '{"data":{"k":"v"}}', NULL),
              ('fcm', 'fcm-f:1', '{"notification":{"title":"t"}}', 'f')
            """, [hex("1"), hex("2")])
    }

    @Test("each provider's rows are claimed with that provider's credentials; FCM rows read as FCM, environment a placeholder")
    func routing() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insertMixed(c)
            let rows = try await claim(c, apns: ["default"], fcm: ["f"])
            #expect(rows.map(\.deviceToken).sorted() == [Self.hex("1"), "fcm-f:1"])
            let f = try #require(rows.first { $0.provider == .fcm })
            #expect(f.verdict == .send && f.credential == "f" && f.environment == .production && f.pushType == .alert)
            #expect(f.payload == Array(#"{"notification":{"title":"t"}}"#.utf8) && f.topic == nil && f.priority == nil)
            let a = try #require(rows.first { $0.provider == .apns })
            #expect(a.verdict == .send && a.credential == "default" && a.environment == .development)
            // The rest: APNs `a` and FCM default.
            let rest = try await claim(c, apns: ["a"], fcm: ["default"])
            #expect(rest.map(\.deviceToken).sorted() == [Self.hex("2"), "fcm-default:1"])
            #expect(rest.first { $0.deviceToken == "fcm-default:1" }?.credential == "default")
            #expect(try await claim(c, apns: ["default", "a"], fcm: ["default", "f"]).isEmpty)
        }
    }

    @Test("holds and probes key endpoints by (credential, channel): the FCM default credential is not the APNs one")
    func holdsAndProbes() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.insertMixed(c)
            try await Holds.add(c, [.fcm("default")])
            #expect(try await c.claimHeads(credentials: [.apns: ["default"], .fcm: ["default"]], defaultEnvironment: .development).count == 1)
            #expect(try await c.lastDue(credentials: [.fcm: ["f"]], defaultEnvironment: .development) != nil)
            #expect(try await c.lastDue(credentials: [.apns: ["f"]], defaultEnvironment: .development) == nil)
            try await Holds.add(c, [Endpoint(credential: "a", environment: .development)])
            let held = try await claim(c, apns: ["default", "a"], fcm: ["default", "f"])
            #expect(held.map(\.deviceToken).sorted() == [Self.hex("1"), "fcm-f:1"])
            try await c.query("UPDATE pushq.notifications SET status = 'queued', locked_by = NULL, locked_until = NULL, attempts = 0")
            // A probe of the FCM default endpoint takes its rows alone, not the APNs default ones.
            let probe = try await claim(c, only: .fcm("default"))
            #expect(probe.map(\.deviceToken) == ["fcm-default:1"])
            let apnsProbe = try await claim(c, only: Endpoint(credential: "default", environment: .development))
            #expect(apnsProbe.map(\.deviceToken) == [Self.hex("1")])
            #expect(try await claim(c, only: Endpoint(credential: "default", environment: .production)).isEmpty)
        }
    }

    @Test("an FCM token is invalid only as recorded for FCM, case-sensitive, whatever the environment; FCM rows are never throttled")
    func invalidAndThrottled() async throws {
        try await TestDatabase.withConnection { c in
            let shared = Self.hex("c")  // a string both providers accept
            try await c.query("""
                INSERT INTO pushq.devices (device_token, environment, provider, registered_at, invalidated_at, invalid_reason) VALUES
                  ($1, 'production', 'fcm', NULL, now(), 'UNREGISTERED'),
                  ($2, 'production', 'apns', NULL, now(), 'Unregistered')
                """, [Self.fcmToken, shared])
            try await c.complete([], invalidations: [], throttles: [TokenThrottle(deviceToken: Self.hex("d"), environment: .development, delaySeconds: 300)],
                                 holds: [], resumed: [], workerID: "w0")
            try await c.query("""
                INSERT INTO pushq.notifications (provider, device_token, payload, environment) VALUES
                  ('fcm', $1, '{}', NULL),
                  ('fcm', $2, '{}', NULL),
                  ('fcm', $3, '{}', NULL),
                  ('apns', $3, '{}', 'production'),
                  ('fcm', $4, '{}', NULL),
                  ('apns', $4, '{}', NULL)
                """, [Self.fcmToken, Self.fcmToken.lowercased(), shared, Self.hex("d")])
            let rows = try await claim(c)
            let verdicts = Dictionary(grouping: rows, by: { "\($0.provider.rawValue)/\($0.deviceToken)" }).mapValues { $0.map(\.verdict) }
            #expect(verdicts["fcm/\(Self.fcmToken)"] == [.tokenInvalidated])
            #expect(verdicts["fcm/\(Self.fcmToken.lowercased())"] == [.send], "another token: FCM tokens are case-sensitive")
            #expect(verdicts["fcm/\(shared)"] == [.send], "invalid for APNs, not for FCM")
            #expect(verdicts["apns/\(shared)"] == [.tokenInvalidated])
            #expect(verdicts["fcm/\(Self.hex("d"))"] == [.send], "throttles are APNs-only")
            #expect(verdicts["apns/\(Self.hex("d"))"] == [.throttled])
        }
    }

    /// write-back stores fcm_message_name; an FCM invalidation is recorded as given, keyed by provider, and
    /// stops the token's next rows
    @Test("write-back stores fcm_message_name; an FCM invalidation is recorded by provider and stops the token's next rows")
    func writeBack() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', $1, '{}'), ('fcm', 'Other:1', '{}')
                """, [Self.fcmToken])
            try await c.query("INSERT INTO pushq.devices (device_token, provider, user_ref) VALUES ($1, 'fcm', 'alice')", [Self.fcmToken])
            let rows = try await claim(c)
            #expect(rows.count == 2)
            let name = "projects/demo/messages/0:1700000000000000%abc"
            let byToken = Dictionary(uniqueKeysWithValues: rows.map { ($0.deviceToken, $0) })
            let sent = try #require(byToken["Other:1"])
            let gone = try #require(byToken[Self.fcmToken])
            let write = try await c.complete([
                RowCompletion(id: sent.id, attempt: sent.attempts, lease: sent.lease, disposition: Disposition(status: .sent, reason: nil), httpStatus: 200,
                              apnsUniqueID: nil, messageName: name),
                RowCompletion(id: gone.id, attempt: gone.attempts, lease: gone.lease, disposition: Disposition(status: .failed, reason: "UNREGISTERED"),
                              httpStatus: 404, apnsUniqueID: nil),
            ], invalidations: [
                TokenInvalidation(deviceToken: Self.fcmToken, environment: .development, reason: "UNREGISTERED", atMilliseconds: nil, provider: .fcm),
                TokenInvalidation(deviceToken: "Other:1", environment: .production, reason: "INVALID_ARGUMENT", atMilliseconds: 1_000, provider: .fcm),
            ], holds: [], resumed: [], workerID: "w1")
            #expect(write.updated == 2)
            let r = try await c.query("SELECT device_token, status, fcm_message_name, apns_unique_id FROM pushq.notifications ORDER BY id")
            #expect(r.string(0, 1) == "failed" && r.string(0, 2) == nil)
            #expect(r.string(1, 1) == "sent" && r.string(1, 2) == name && r.string(1, 3) == nil)
            let d = try await c.query("""
                SELECT device_token, environment, provider, invalid_reason, user_ref FROM pushq.devices ORDER BY device_token COLLATE "C"
                """)
            #expect(d.count == 2)
            #expect(d.string(0, 0) == "Other:1" && d.string(0, 1) == "production" && d.string(0, 2) == "fcm" && d.string(0, 3) == "INVALID_ARGUMENT")
            #expect(d.string(1, 0) == Self.fcmToken && d.string(1, 1) == "production" && d.string(1, 3) == "UNREGISTERED" && d.string(1, 4) == "alice",
                    "the registered row was updated, not a lower-cased copy added")
            try await c.query("INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', $1, '{}')", [Self.fcmToken])
            #expect(try await claim(c).map(\.verdict) == [.tokenInvalidated])
        }
    }

    /// an APNs token sent through FCM by mistake: FCM's invalidation leaves the APNs registration alone and
    /// the write-back goes through
    @Test("an APNs token sent through FCM by mistake: FCM's invalidation leaves the APNs registration alone")
    func crossProviderInvalidation() async throws {
        try await TestDatabase.withConnection { c in
            let apns = Self.hex("a")
            try await c.query("INSERT INTO pushq.devices (device_token, user_ref) VALUES ($1, 'alice')", [apns])
            try await c.query("INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', $1, '{}')", [apns])
            let row = try #require(try await claim(c).first)
            let write = try await c.complete([
                RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease, disposition: Disposition(status: .failed, reason: "INVALID_ARGUMENT"),
                              httpStatus: 400, apnsUniqueID: nil),
            ], invalidations: [
                TokenInvalidation(deviceToken: apns, environment: .production, reason: "INVALID_ARGUMENT", atMilliseconds: nil, provider: .fcm),
            ], holds: [], resumed: [], workerID: "w1")
            #expect(write.updated == 1)
            let d = try await c.query("SELECT provider, invalidated_at IS NULL FROM pushq.devices")
            #expect(d.count == 1 && d.string(0, 0) == "apns" && d.string(0, 1) == "t")
        }
    }
}
