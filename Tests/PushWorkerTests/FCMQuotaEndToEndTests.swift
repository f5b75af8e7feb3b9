import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing

/// FCM's 429 QUOTA_EXCEEDED at the edges: one device's message rate against the project's quota.
@Suite("FCM quota end to end", .serialized)
struct FCMQuotaEndToEndTests {
    typealias F = FCMEndToEndTests

    static let pauses = "SELECT count(*) FROM pushq.credential_pauses WHERE credential = 'default' AND environment = 'fcm'"

    /// one device over its message rate: only its row waits for Retry-After (600 s), its attempt counted; the
    /// other FCM rows go out meanwhile and nothing is held
    @Test("one device over its message rate: only its row waits for Retry-After, attempt counted; others go out, nothing held")
    func oneDevice() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let t = { (i: Int) in F.token(i, "h") }
                mock.setFCMRule(forToken: t(0), .always(.error(.quotaExceeded, message: "Device message rate exceeded.", retryAfter: "600")))
                let hot = try await F.insertFCM(db, t(0))
                try await withWorker(try await F.configuration(db, mockURL: mockURL)) { _ in
                    #expect(try await eventually(timeout: .seconds(20)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'retrying' AND last_status = 429") == 1
                    })
                    for i in 1...10 { _ = try await F.insertFCM(db, t(i)) }
                    #expect(try await eventually(timeout: .seconds(20)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 10
                    }, "the other tokens' rows waited for the hot token's Retry-After")
                }
                #expect(try await F.final(db, hot) == F.Final(status: "retrying", reason: "QUOTA_EXCEEDED", http: 429, attempts: 1))
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE id = \(hot) AND scheduled_at > now() + interval '500 seconds'") == 1)
                #expect(try await scalar(db, Self.pauses) == 0)
                #expect(mock.fcmRequests().filter { $0.registrationToken == t(0) }.count == 1)
            }
        }
    }

    /// many devices get 429 not saying whose quota: the project's; the credential is held (QUOTA_EXCEEDED)
    /// for Retry-After, then every row goes out
    @Test("many devices with 429 naming no quota: the project's; the credential is held for Retry-After, then every row goes out")
    func manyDevices() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, mockURL in
                let t = { (i: Int) in F.token(i, "p") }
                for i in 0..<5 {
                    mock.setFCMRule(forToken: t(i), MockFCMTokenRule(sequence: [.error(.quotaExceeded, message: "Sending limit exceeded.", retryAfter: "2")]))
                    _ = try await F.insertFCM(db, t(i))
                }
                try await withWorker(try await F.configuration(db, mockURL: mockURL)) { _ in
                    let held = try await eventually(timeout: .seconds(20)) {
                        try await scalar(db, Self.pauses + " AND reason = 'QUOTA_EXCEEDED' AND kind = 'outage'") == 1
                    }
                    #expect(held)
                    _ = try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                #expect(try await statusCounts(db) == ["sent": 5])
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") <= 2)
                #expect(try await scalar(db, Self.pauses) == 0)
            }
        }
    }
}
