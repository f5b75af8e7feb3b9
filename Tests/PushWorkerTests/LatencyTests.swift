import Foundation
import MockPush
import PushStore
import PushTestSupport
import PushWorker
import Testing

@Suite("Idle latency", .serialized)
struct LatencyTests {
    /// Event-based: with a poll of ten minutes, each row can reach the mock within the wait only
    /// through the NOTIFY. The latency itself is printed; `make bench` (latency) measures it,
    /// since a wall-clock bound fails whenever the machine is busy.
    @Test("an idle worker sends a new row as soon as it is inserted: the NOTIFY wakes it, not the poll")
    func idleLatency() async throws {
        try await TestDatabase.withConnection { db in
            try await withMock { mock, apnsURL in
                var configuration = try workerConfiguration(databaseURL: try await databaseURL(db), apnsURL: apnsURL)
                configuration.pollSeconds = 600  // no poll during the test: only the NOTIFY can wake the worker
                // Warm up: the worker's first claim sends it and opens the connection.
                try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Fixtures.token(0, prefix: "f")])
                try await withWorker(configuration) { _ in
                    try await mock.waitForRequests(count: 1, timeout: .seconds(30))
                    let listening = try await eventually {
                        try await scalar(db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'") == 1
                    }
                    #expect(listening)
                    var latencies: [Double] = []
                    for i in 1...40 {
                        try await Task.sleep(for: .milliseconds(20))
                        let before = MockClock.wallNanoseconds()  // the clock the mock stamps requests with
                        try await db.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [Fixtures.token(i, prefix: "f")])
                        try await mock.waitForRequests(count: i + 1, timeout: .seconds(60))
                        let arrived = try #require(mock.requests().last { $0.deviceToken == Fixtures.token(i, prefix: "f") })
                        latencies.append(Double(arrived.receivedWallNanoseconds - before) / 1e6)
                    }
                    latencies.sort()
                    let p50 = latencies[latencies.count / 2]
                    let p99 = latencies[latencies.count - 1]
                    print("idle latency INSERT→mock: p50 \(p50) ms, max \(p99) ms over \(latencies.count)")
                    #expect(latencies.count == 40 && p99 < 60_000, "every row arrived well before a poll could have claimed it")
                }
            }
        }
    }
}
