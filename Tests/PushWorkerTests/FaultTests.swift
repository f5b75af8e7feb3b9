import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushTransport
import PushWorker
import Testing

/// Faults that last, against a worker in this process: an APNs that cannot be reached, a
/// wrong clock, throttled tokens, rows that expire while waiting, credentials of their own.
@Suite("Faults that last", .serialized)
struct FaultTests {
    @Test("an APNs that cannot be reached at start is an outage: the worker starts, rows wait with no attempt used, then go out")
    func unreachableAtStart() async throws {
        try await TestDatabase.withConnection { db in
            let hold = try HeldLoopbackPort()
            let port = hold.port
            try await insertAlerts(db, count: 50, prefix: "8")
            var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: "https://127.0.0.1:\(port)")
            configuration.outageProbeBaseSeconds = 0.2
            configuration.outageProbeCapSeconds = 0.5
            try await withWorker(configuration) { _ in
                // The hold is written before the rows it sends back: wait for both (no row in flight,
                // not even a probe's) before looking at the attempts.
                let held = try await eventually {
                    let holds = try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses WHERE kind = 'outage' AND reason = 'TransportConnectFailed'")
                    let inFlight = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'")
                    return holds == 1 && inFlight == 0
                }
                #expect(held)
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") == 0)
                #expect(try await statusCounts(db)["failed"] == nil)
                try await withMock({ $0.port = port }) { mock, _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                    #expect(try await statusCounts(db) == ["sent": 50])
                    #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") == 1)
                    #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0, "the probe's 200 lifted the hold")
                    #expect(Set(mock.requests().map(\.apnsID)).count == 50)
                }
            }
            withExtendedLifetime(hold) {}
        }
    }

    @Test("an outage of 500s: rows wait with their attempts given back, only probes go out meanwhile, everything is sent after")
    func outageOf500s() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                mock.setFailureRate(MockFailureRate(rate: 1, answer: .error(.internalServerError)))
                try await insertAlerts(db, count: 300, prefix: "9")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.outageProbeBaseSeconds = 0.2
                configuration.outageProbeCapSeconds = 0.4
                try await withWorker(configuration) { _ in
                    #expect(try await eventually { try await pausedAndNothingHeld(db) })
                    let hold = try await db.query("SELECT kind, reason, message FROM pushq.credential_pauses")
                    #expect(hold.string(0, 0) == "outage" && hold.string(0, 1) == "InternalServerError")
                    let before = mock.stats().requests
                    // One probe row each time the worker reads the holds (every second): a handful of
                    // requests in 3 s, not the 300 rows again.
                    _ = try await eventually(timeout: .seconds(3)) { false }
                    let during = mock.stats().requests - before
                    #expect(during >= 1 && during <= 8, "\(during) requests in 3 s while down")
                    #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") <= 1)
                    mock.setFailureRate(nil)
                    try await waitUntilAllFinal(db, timeout: .seconds(30))
                }
                #expect(try await statusCounts(db) == ["sent": 300])
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") <= 2)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0)
            }
        }
    }

    /// a worker clock far behind APNs': ExpiredProviderToken for fresh tokens pauses the credential pointing
    /// at NTP, no attempt used
    @Test("a worker clock far behind APNs': ExpiredProviderToken pauses the credential pointing at NTP, no attempt used")
    func wrongClock() async throws {
        try await TestDatabase.withConnection { db in
            // The mock's clock two hours ahead: every token this worker signs looks two hours old.
            try await withMock({ $0.clock = { MockClock.wallSeconds() + 7200 } }) { mock, apnsURL in
                try await insertAlerts(db, count: 30, prefix: "5")
                try await db.query("UPDATE pushq.notifications SET max_attempts = 2")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.withoutProbes()
                try await withWorker(configuration) { _ in
                    let paused = try await eventually { try await pausedAndNothingHeld(db) }
                    #expect(paused)
                    let requests = mock.stats().requests
                    // Two claims after the pause: none may take the paused rows (rows checked before requests).
                    let claimed = try await twoClaims(db, after: try await databaseNow(db))
                    let held = try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sending'")
                    #expect(claimed && held == 0)
                    #expect(mock.stats().requests == requests, "paused: no resend loop")
                }
                let pause = try await db.query("SELECT kind, reason, message FROM pushq.credential_pauses")
                #expect(pause.string(0, 0) == "credential" && pause.string(0, 1) == "ExpiredProviderToken")
                #expect(pause.string(0, 2)?.contains("clock") == true && pause.string(0, 2)?.contains("NTP") == true)
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") == 0)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE attempts > max_attempts OR status = 'failed'") == 0)
            }
        }
    }

    @Test("429 slows that token only: its other rows wait until the throttle ends; other tokens go out")
    func throttledToken() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let slow = Fixtures.token(1, prefix: "6")
                mock.setRule(forToken: slow, MockTokenRule(sequence: [.error(.tooManyRequests)]))
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [slow])
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.token_throttles") == 1 })
                    // The same token (any case) and another token, enqueued after the 429.
                    try await db.query("""
                        INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{"aps":{}}'), ($1, '{"aps":{}}'), ($2, '{"aps":{}}')
                        """, [slow.uppercased(), Fixtures.token(2, prefix: "6")])
                    #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 1 })
                    _ = try await eventually(timeout: .milliseconds(500)) { false }  // a few polls of the worker
                }
                let waiting = try await db.query("""
                    SELECT count(*) FROM pushq.notifications
                     WHERE lower(device_token) = $1 AND status = 'retrying' AND scheduled_at > now() + interval '250 seconds'
                    """, [slow])
                #expect(try waiting.decode(Int.self, 0, 0) == 3)
                #expect(mock.requests().filter { $0.deviceToken?.lowercased() == slow }.count == 1, "the throttled token was sent once")
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications WHERE lower(device_token) = '\(slow)'") == 1)
            }
        }
    }

    @Test("a row whose expires_at passes while it waits for a stream ends expired and never reaches APNs")
    func expiresWhileWaitingForAStream() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let first = Fixtures.token(1, prefix: "4")
                let late = Fixtures.token(2, prefix: "4")
                mock.setRule(forToken: first, .always(MockAnswer.normal.delayed(by: 2500)))
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, scheduled_at) VALUES ($1, '{"aps":{}}', now() - interval '1 second');
                    """, [first])
                try await db.query("INSERT INTO pushq.notifications (device_token, payload, expires_at) VALUES ($1, '{\"aps\":{}}', now() + interval '1.5 seconds')", [late])
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.apns.streamsPerConnection = 1  // the second row waits for the first's stream
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db, timeout: .seconds(20))
                }
                let r = try await db.query("SELECT status, attempts FROM pushq.notifications WHERE device_token = $1", [late])
                #expect(r.string(0, 0) == "expired" && r.string(0, 1) == "0")
                #expect(mock.requests().allSatisfy { $0.deviceToken != late })
            }
        }
    }

    @Test("each credential of the credentials file sends its rows with its own default topic")
    func credentialTopics() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.bundleIDs = [Fixtures.topic, "com.example.other"] }) { mock, apnsURL in
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential, push_type)
                    VALUES ($1, '{"aps":{}}', NULL, 'alert'), ($2, '{"aps":{}}', 'b', 'alert'), ($3, '{"aps":{}}', 'b', 'voip')
                    """, [Fixtures.token(1, prefix: "3"), Fixtures.token(2, prefix: "3"), Fixtures.token(3, prefix: "3")])
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.credentials[CredentialKey(.apns, "b")] = configuration.credentials[CredentialKey(.apns, "default")]
                configuration.credentialTopics = ["b": "com.example.other"]
                try await withWorker(configuration) { _ in try await waitUntilAllFinal(db) }
                #expect(try await statusCounts(db) == ["sent": 3])
                let topics = Dictionary(uniqueKeysWithValues: mock.requests().map { ($0.deviceToken ?? "", $0.header("apns-topic") ?? "") })
                #expect(topics == [Fixtures.token(1, prefix: "3"): Fixtures.topic, Fixtures.token(2, prefix: "3"): "com.example.other",
                                   Fixtures.token(3, prefix: "3"): "com.example.other.voip"])
            }
        }
    }

    @Test("no environment anywhere means production: a device registered without one and a row inserted without one agree")
    func oneDefaultEnvironment() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock({ $0.environment = .production }) { mock, apnsURL in
                let token = Fixtures.token(1, prefix: "2")
                mock.setRule(forToken: token, .always(.unregistered(at: Int64(Date().timeIntervalSince1970 * 1000))))
                try await db.query("INSERT INTO pushq.devices (device_token, user_ref, registered_at) VALUES ($1, 'u', now() - interval '1 day')", [token])
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [token])
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.sender = PushSenderConfiguration(extraCAFile: Fixtures.caFile, connections: 1, requestTimeout: 5,
                                                               connectionStagger: 0)
                configuration.apns = APNsConfiguration(baseURL: apnsURL, streamsPerConnection: 10)
                #expect(configuration.apns.environment == .production)
                try await withWorker(configuration) { _ in
                    try await waitUntilAllFinal(db)
                    // The invalidation landed on the registered device, so the next row is not sent.
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [token])
                    try await waitUntilAllFinal(db)
                }
                let devices = try await db.query("SELECT environment, invalid_reason, user_ref FROM pushq.devices")
                #expect(devices.count == 1)
                #expect(devices.string(0, 0) == "production" && devices.string(0, 1) == "Unregistered" && devices.string(0, 2) == "u")
                let last = try await db.query("SELECT status, last_reason FROM pushq.notifications ORDER BY id DESC LIMIT 1")
                #expect(last.string(0, 0) == "failed" && last.string(0, 1) == "TokenInvalidated")
                #expect(mock.stats().requests == 1)
            }
        }
    }

    @Test("rows for a credential no worker has still expire on time; the worker registers itself and its credentials")
    func orphansExpireAndWorkersRegister() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { _, apnsURL in
                try await db.query("""
                    INSERT INTO pushq.notifications (device_token, payload, credential, expires_at)
                    VALUES ($1, '{"aps":{}}', 'nobody', now() + interval '1 second'), ($1, '{"aps":{}}', 'nobody', NULL)
                    """, [Fixtures.token(1, prefix: "1")])
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.heartbeatSeconds = 0.2
                try await withWorker(configuration) { _ in
                    #expect(try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'expired'") == 1 })
                    let live = try await db.liveWorkers()
                    #expect(live.map(\.id) == ["test-worker"])
                    #expect(live.first?.credentials == [ServedCredential(name: "default", environment: "development", topic: Fixtures.topic)])
                    #expect(live.first?.version == PushqVersion.current)
                    let orphans = try await db.rowsWithoutWorker()
                    #expect(orphans.map(\.credential) == ["nobody"] && orphans.map(\.rows) == [1])
                }
                #expect(try await db.liveWorkers().isEmpty, "a clean stop unregisters")
            }
        }
    }

    @Test("a client certificate past its notAfter pauses its credential with a message saying so; nothing is sent")
    func expiredClientCertificate() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                try await insertAlerts(db, count: 10, prefix: "7")
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                let expired = APNsClientCertificate(file: Fixtures.directory + "/client-expired.pem",
                                                    format: .pem(keyFile: Fixtures.directory + "/client-expired.key"))
                configuration.credentials = [CredentialKey(.apns, WorkerConfiguration.defaultCredentialName): .apns(.certificate(expired))]
                try await withWorker(configuration) { _ in
                    let paused = try await eventually { try await pausedAndNothingHeld(db) }
                    #expect(paused)
                }
                let pause = try await db.query("SELECT kind, reason, message FROM pushq.credential_pauses")
                #expect(pause.string(0, 0) == "credential" && pause.string(0, 1) == "ClientCertificateExpired")
                #expect(pause.string(0, 2)?.contains("client certificate") == true)
                #expect(mock.stats().requests == 0 && mock.stats().connectionsOpened == 0)
                #expect(try await scalar(db, "SELECT max(attempts) FROM pushq.notifications") == 0)
            }
        }
    }

    /// three BadDeviceToken rows on an otherwise quiet endpoint: each waits once (attempt given back), then
    /// ends failed/BadDeviceToken at its second request, its token invalidated, nothing held
    @Test("three BadDeviceToken rows on a quiet endpoint each wait once, then end failed with the token invalidated, nothing held")
    func quietBadTokensEnd() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                let tokens = (1...3).map { Fixtures.token($0, prefix: "0") }
                for token in tokens {
                    mock.setRule(forToken: token, .always(.error(.badDeviceToken)))
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\":{}}')", [token])
                }
                let configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                try await withWorker(configuration) { _ in
                    _ = try await waitUntilAllFinal(db, timeout: .seconds(60))
                }
                let r = try await db.query("SELECT status, attempts, last_reason, last_status FROM pushq.notifications ORDER BY id")
                for i in 0..<3 {
                    #expect((0..<4).map { r.string(i, $0) } == ["failed", "1", "BadDeviceToken", "400"], "row \(i)")
                }
                #expect(mock.stats().requests == 6, "two requests per row")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.devices WHERE invalid_reason = 'BadDeviceToken' AND invalidated_at IS NOT NULL") == 3)
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.credential_pauses") == 0)
            }
        }
    }
}

/// A loopback port nothing listens on, held until the value is released: bound with
/// SO_REUSEPORT and never listening, so connects to it are refused and no other server of the
/// suite (hundreds bind port 0) is given it meanwhile; a mock can still bind it beside the
/// hold (the mock's listener asks for SO_REUSEPORT too).
final class HeldLoopbackPort {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw CocoaError(.fileWriteUnknown)
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
