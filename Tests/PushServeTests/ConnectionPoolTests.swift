import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// serve's connections: lent one request at a time, at most `capacity`.
@Suite("Serve: connection pool")
struct ConnectionPoolTests {
    /// with every slot taken, requests wait; when an open fails, a waiting request gets the slot and tries
    /// itself (none waits forever)
    @Test("with every slot taken, requests wait; when an open fails, a waiting request gets the slot (none waits forever)")
    func failedOpenFreesTheSlot() async throws {
        // A server that completes the TCP handshake and never answers: each open takes libpq's
        // connect_timeout (1 s) and fails.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        #expect(listen(fd, 16) == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let pool = ConnectionPool(url: "postgresql://nobody@127.0.0.1:\(port)/none?connect_timeout=1", capacity: 1, logger: ServeHarness.logger)
        let failures = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    do {
                        try await pool.withConnection { _ = try await $0.query("SELECT 1") }
                        return false
                    } catch {
                        return true
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 3)
    }

    @Test("all lent: a request waits at most the acquire timeout, then DatabaseBusy; past the queue's bound, DatabaseBusy at once")
    func boundedWait() async throws {
        // Each pool's one connection stays lent until the test lets it go, so a request can end
        // only as the pool decides: by its wait running out (0.3 s) or, past the bound, at once.
        try await TestDatabase.with { url in
            let short = ConnectionPool(url: url, capacity: 1, limits: .init(acquireTimeout: .milliseconds(300)), logger: ServeHarness.logger)
            let long = ConnectionPool(url: url, capacity: 1, limits: .init(acquireTimeout: .seconds(600), maxWaiting: 1), logger: ServeHarness.logger)
            for pool in [short, long] {
                let (lent, lentSignal) = AsyncStream<Void>.makeStream()
                let (release, releaser) = AsyncStream<Void>.makeStream()
                let holder = Task {
                    try await pool.withConnection { _ in
                        lentSignal.yield()
                        for await _ in release { break }
                    }
                }
                var lentEvents = lent.makeAsyncIterator()
                _ = await lentEvents.next()
                if pool === short {
                    let busy = await Self.busy(pool)
                    #expect(busy?.reason.hasPrefix("no connection fell free within") == true, "\(String(describing: busy))")
                } else {
                    // Two requests for the one place in line: whichever comes second is refused at
                    // once (the other waits for the 600 s), then the one in line gets the
                    // connection given back. Which is which is the scheduler's choice.
                    try await withThrowingTaskGroup(of: Result<Int?, any Error>.self) { group in
                        for _ in 0..<2 {
                            group.addTask {
                                do { return .success(try await pool.withConnection { try await $0.query("SELECT 1").decode(Int.self, 0, 0) }) }
                                catch { return .failure(error) }
                            }
                        }
                        let first = try await group.next()
                        guard case .failure(let error)? = first else {
                            Issue.record("the first to end got a connection while it was still lent: \(String(describing: first))")
                            releaser.yield()
                            return
                        }
                        #expect((error as? DatabaseBusy)?.reason == "every place in line (1) is taken", "\(error)")
                        releaser.yield()
                        let second = try await group.next()
                        guard case .success(let value)? = second else {
                            Issue.record("the one in line did not get the connection given back: \(String(describing: second))")
                            return
                        }
                        #expect(value == 1, "the one in line gets the connection given back")
                    }
                }
                releaser.yield()
                try await holder.value
                await pool.close()
            }
        }
    }

    /// The ``DatabaseBusy`` a request on `pool` gets, nil if it got a connection.
    static func busy(_ pool: ConnectionPool) async -> DatabaseBusy? {
        do {
            try await pool.withConnection { _ in }
            return nil
        } catch {
            return error as? DatabaseBusy
        }
    }

    @Test("connections are reused: many requests one after another open one session")
    func reuse() async throws {
        try await TestDatabase.with { url in
            let pool = ConnectionPool(url: url, capacity: 4, logger: ServeHarness.logger)
            var pids = Set<Int32>()
            for _ in 0..<10 { pids.insert(try await pool.withConnection { await $0.backendPID }) }
            #expect(pids.count == 1)
            await pool.close()
        }
    }
}
