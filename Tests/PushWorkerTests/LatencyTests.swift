import Foundation
import MockAPNs
import PushStore
import PushTestSupport
import PushWorker
import Testing

@Suite("Idle latency", .serialized)
struct LatencyTests {
    @Test("an idle worker sends a new row within milliseconds of its INSERT (NOTIFY, not polling): p50 under 10 ms")
    func idleLatency() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.pollSeconds = 5  // a poll would take seconds: only the NOTIFY can be this fast
                try await withWorker(configuration) { _ in
                    // Warm up: the first request opens the connection.
                    try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Fixtures.token(0, prefix: "f")])
                    try await mock.waitForRequests(count: 1, timeout: .seconds(10))
                    var latencies: [Double] = []
                    for i in 1...40 {
                        try await Task.sleep(for: .milliseconds(20))
                        let before = MockClock.wallNanoseconds()  // the clock the mock stamps requests with
                        try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Fixtures.token(i, prefix: "f")])
                        try await mock.waitForRequests(count: i + 1, timeout: .seconds(10))
                        let arrived = try #require(mock.requests().last { $0.deviceToken == Fixtures.token(i, prefix: "f") })
                        latencies.append(Double(arrived.receivedWallNanoseconds - before) / 1e6)
                    }
                    latencies.sort()
                    let p50 = latencies[latencies.count / 2]
                    let p99 = latencies[latencies.count - 1]
                    print("idle latency INSERT→mock: p50 \(p50) ms, max \(p99) ms over \(latencies.count)")
                    #expect(p50 < 10, "p50 \(p50) ms")
                }
            }
        }
    }
}
