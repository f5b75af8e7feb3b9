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
