import Foundation
import PushServe
import PushStore
import PushTestSupport
import Testing

/// serve's connections: lent one request at a time, at most `capacity`.
@Suite("Serve: connection pool")
struct ConnectionPoolTests {
    @Test("with every slot taken, requests wait; when an open fails, a waiting request gets the slot and tries itself (none waits forever)")
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
        // The one connection stays lent until the test lets it go: the waiter can only end by
        // its wait running out (0.3 s), and the request past the bound (1 waiting) at once.
        try await TestDatabase.with { url in
            let pool = ConnectionPool(url: url, capacity: 1, limits: .init(acquireTimeout: .milliseconds(300), maxWaiting: 1),
                                      logger: ServeHarness.logger)
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
            let waiter = Task { () -> DatabaseBusy? in
                do {
                    try await pool.withConnection { _ in }
                    return nil
                } catch let busy as DatabaseBusy {
                    return busy
                }
            }
            #expect(try await LockWait.until(timeout: .seconds(60)) { await pool.waitingRequests == 1 })
            var pastTheBound: DatabaseBusy?
            do {
                try await pool.withConnection { _ in }
            } catch let busy as DatabaseBusy {
                pastTheBound = busy
            }
            #expect(pastTheBound?.reason == "every place in line (1) is taken")
            let timedOut = try await waiter.value
            #expect(timedOut?.reason.hasPrefix("no connection fell free within") == true, "\(String(describing: timedOut))")
            releaser.yield()
            try await holder.value
            #expect(try await pool.withConnection { try await $0.query("SELECT 1").decode(Int.self, 0, 0) } == 1)
            await pool.close()
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
