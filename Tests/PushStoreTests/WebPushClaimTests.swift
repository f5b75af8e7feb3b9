import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// Claiming and writing back Web Push rows: the keys decoded by name, holds and probes per origin
/// (the origin computed in SQL as `WebPushOrigin` writes it), the push service's `Location` written
/// back, and a 404/410 invalidating the exact endpoint until it is registered again.
@Suite("Web Push claim and write-back")
struct WebPushClaimTests {
    static let keys = WebPushSchemaTests.keys

    func claim(_ c: PGConnection, webpush: [String] = ["default"], only: Endpoint? = nil) async throws -> [ClaimedNotification] {
        try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"], .webpush: webpush],
                          defaultEnvironment: .production, only: only).rows
    }

    static func origin(_ endpoint: String) throws -> WebPushOrigin {
        guard case .success(let e) = WebPushEndpoint.parse(endpoint) else { throw PGError(code: .invalidValue, message: "bad endpoint") }
        return e.origin
    }

    @Test("a Web Push row is claimed with its endpoint byte for byte and its keys, read by column name")
    func decoded() async throws {
        try await TestDatabase.withConnection { c in
            let endpoint = "https://Push.Example.com/Sub/AbC?up=1"
            try await WebPushSchemaTests.insert(c, ["device_token": endpoint, "collapse_id": "news", "priority": "5", "credential": "site"])
            try await c.execute("INSERT INTO pushq.notifications (device_token, payload) VALUES (repeat('ab', 32), '{\"aps\":{}}')")
            let rows = try await claim(c, webpush: ["site"])
            let w = try #require(rows.first { $0.provider == .webpush })
            #expect(rows.count == 2)
            #expect(w.verdict == .send && w.deviceToken == endpoint && w.credential == "site")
            #expect(w.collapseID == "news" && w.priority == 5)
            let claimedKeys: String = try #require(w.webpushKeys)
            let keys = try await c.query("SELECT $1::jsonb = $2::jsonb", [claimedKeys, Self.keys]).string(0, 0)
            #expect(keys == "t", "the row's keys as its jsonb text: \(w.webpushKeys ?? "nil")")
            #expect(rows.first { $0.provider == .apns }?.webpushKeys == nil)
            #expect(w.endpoint.channel == "https://push.example.com")
        }
    }

    @Test("a hold of one origin holds its rows alone, whatever the endpoint's case or an explicit :443; a probe takes that origin's")
    func holdsPerOrigin() async throws {
        try await TestDatabase.withConnection { c in
            let held = ["https://fcm.googleapis.com/fcm/send/a", "HTTPS://FCM.GoogleAPIs.com:443/fcm/send/b"]
            let other = ["https://updates.push.services.mozilla.com/wpush/v2/c", "https://fcm.googleapis.com:8443/d"]
            for endpoint in held + other { try await WebPushSchemaTests.insert(c, ["device_token": endpoint]) }
            try await Holds.add(c, [.webPush("default", origin: try Self.origin(held[0]))])
            #expect(try await claim(c).map(\.deviceToken).sorted() == other.sorted())
            #expect(try await claim(c).isEmpty, "the held origin's rows wait")
            // The probe of the held origin takes its rows alone.
            let probe = try await claim(c, only: .webPush("default", origin: try Self.origin(held[0])))
            #expect(probe.map(\.deviceToken).sorted() == held.sorted())
            // Port 8443 is another origin, its own hold.
            #expect(Endpoint.webPush("default", origin: try Self.origin(other[1])).channel == "https://fcm.googleapis.com:8443")
        }
    }

    @Test("a 201's Location is written to webpush_location; an FCM message name still to fcm_message_name")
    func locationWrittenBack() async throws {
        try await TestDatabase.withConnection { c in
            try await WebPushSchemaTests.insert(c, [:])
            try await c.execute("INSERT INTO pushq.notifications (provider, device_token, payload) VALUES ('fcm', 'tok', '{\"data\":{}}')")
            let rows = try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.webpush: ["default"], .fcm: ["default"]],
                                         defaultEnvironment: .production).rows
            #expect(rows.count == 2)
            let sent = Disposition(status: .sent, reason: nil)
            let location = "https://fcm.googleapis.com/fcm/send/m/0:1700000000%7Cabc"
            let completions = rows.map { r in
                RowCompletion(id: r.id, attempt: r.attempts, lease: r.lease, disposition: sent, httpStatus: r.provider == .webpush ? 201 : 200,
                              apnsUniqueID: nil, messageName: r.provider == .fcm ? "projects/p/messages/1" : nil,
                              webpushLocation: r.provider == .webpush ? location : nil)
            }
            #expect(try await c.complete(completions, invalidations: [], holds: [], resumed: [], workerID: "w1").updated == 2)
            let r = try await c.query("""
                SELECT provider, status, last_status, webpush_location, fcm_message_name FROM pushq.notifications ORDER BY provider
                """)
            #expect(r.string(0, 0) == "fcm" && r.string(0, 1) == "sent" && r.string(0, 3) == nil && r.string(0, 4) == "projects/p/messages/1")
            #expect(r.string(1, 0) == "webpush" && r.string(1, 1) == "sent" && r.string(1, 2) == "201" && r.string(1, 3) == location
                    && r.string(1, 4) == nil)
        }
    }

    @Test("a 410 invalidates the exact endpoint; later rows to it end TokenInvalidated until it is registered again")
    func invalidation() async throws {
        try await TestDatabase.withConnection { c in
            let endpoint = WebPushSchemaTests.endpoint
            let otherCase = endpoint.replacingOccurrences(of: "send", with: "SEND")
            try await WebPushSchemaTests.register(c, ["registered_at": "2020-01-01T00:00:00Z"])
            try await WebPushSchemaTests.register(c, ["device_token": otherCase, "registered_at": "2020-01-01T00:00:00Z"])
            try await WebPushSchemaTests.insert(c, [:])
            let first = try #require(try await claim(c).first)
            let gone = Disposition(status: .failed, reason: "Gone")
            let write = try await c.complete(
                [RowCompletion(id: first.id, attempt: first.attempts, lease: first.lease, disposition: gone, httpStatus: 410, apnsUniqueID: nil)],
                invalidations: [TokenInvalidation(deviceToken: endpoint, environment: .development, reason: "Gone", atMilliseconds: nil,
                                                  provider: .webpush)],
                holds: [], resumed: [], workerID: "w1")
            #expect(write.updated == 1)
            let devices = try await c.query("""
                SELECT device_token, environment, invalid_reason, invalidated_at IS NOT NULL FROM pushq.devices ORDER BY device_token
                """)
            let listed = (0..<devices.count).map { "\(devices.string($0, 0) ?? "")|\(devices.string($0, 1) ?? "")|\(devices.string($0, 2) ?? "-")|\(devices.string($0, 3) ?? "")" }
            #expect(Set(listed) == ["\(endpoint)|production|Gone|t", "\(otherCase)|production|-|f"], "the exact endpoint, byte for byte")
            // Two later rows: to the invalidated endpoint, and to the one that differs in case.
            try await WebPushSchemaTests.insert(c, [:])
            try await WebPushSchemaTests.insert(c, ["device_token": otherCase])
            let later = try await claim(c)
            #expect(later.count == 2)
            #expect(later.first { $0.deviceToken == endpoint }?.verdict == .tokenInvalidated)
            #expect(later.first { $0.deviceToken == otherCase }?.verdict == .send)
            let failed = try await c.query("SELECT status, last_reason FROM pushq.notifications WHERE id = $1",
                                           [try #require(later.first { $0.deviceToken == endpoint }).id])
            #expect(failed.string(0, 0) == "failed" && failed.string(0, 1) == "TokenInvalidated")
            // Registered again (the browser subscribed anew): its rows go out.
            try await c.query("UPDATE pushq.devices SET registered_at = now() + interval '1 second' WHERE device_token = $1", [endpoint])
            try await WebPushSchemaTests.insert(c, [:])
            #expect(try await claim(c).map(\.verdict) == [.send])
        }
    }
    /// A Web Push 429 slows that subscription's other rows, matched byte for byte, and nothing else: neither the same
    /// endpoint in another case, nor an APNs row whose token has the same text, nor an APNs throttle of that text a
    /// Web Push row (a throttle is keyed as its provider matches the token, under the provider's name).
    @Test("a Web Push throttle holds the exact endpoint's other rows, not another case, nor an APNs token of the same text")
    func throttledExactly() async throws {
        try await TestDatabase.withConnection { c in
            let endpoint = WebPushSchemaTests.endpoint
            let otherCase = endpoint.replacingOccurrences(of: "send", with: "SEND")
            let apnsText = String(repeating: "ab", count: 32)
            try await c.complete([], invalidations: [], throttles: [
                TokenThrottle(deviceToken: endpoint, environment: .development, delaySeconds: 300, provider: .webpush),
                TokenThrottle(deviceToken: apnsText.uppercased(), environment: .production, delaySeconds: 300, provider: .apns),
            ], holds: [], resumed: [], workerID: "w1")
            let keys = try await c.query("SELECT device_token, environment FROM pushq.token_throttles ORDER BY environment")
            #expect(keys.string(0, 0) == apnsText && keys.string(0, 1) == "production", "an APNs token lower-case in its environment")
            #expect(keys.string(1, 0) == endpoint && keys.string(1, 1) == "webpush", "an endpoint as given, under the provider's name")
            try await WebPushSchemaTests.insert(c, [:])
            try await WebPushSchemaTests.insert(c, ["device_token": otherCase])
            try await c.execute("INSERT INTO pushq.notifications (device_token, payload) VALUES ('\(apnsText)', '{\"aps\":{}}')")
            let rows = try await claim(c)
            #expect(rows.count == 3)
            #expect(rows.first { $0.deviceToken == endpoint }?.verdict == .throttled)
            #expect(rows.first { $0.deviceToken == otherCase }?.verdict == .send)
            #expect(rows.first { $0.provider == .apns }?.verdict == .throttled)
            let waiting = try await c.query("""
                SELECT count(*) FROM pushq.notifications
                 WHERE device_token = $1 AND status = 'retrying' AND attempts = 0 AND scheduled_at > now() + interval '290 seconds'
                """, [endpoint])
            #expect(try waiting.decode(Int.self, 0, 0) == 1, "due again when the subscription's throttle ends")
            // An APNs throttle of an endpoint's text does not slow the Web Push row.
            try await c.execute("DELETE FROM pushq.token_throttles")
            try await c.complete([], invalidations: [], throttles: [
                TokenThrottle(deviceToken: otherCase, environment: .production, delaySeconds: 300, provider: .apns),
            ], holds: [], resumed: [], workerID: "w1")
            try await WebPushSchemaTests.insert(c, ["device_token": otherCase])
            #expect(try await claim(c).map(\.verdict) == [.send])
        }
    }
}
