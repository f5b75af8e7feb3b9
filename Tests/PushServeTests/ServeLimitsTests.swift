import Dispatch
import Foundation
import MockPush
import PushServe
import PushStore
import PushTestSupport
import Synchronization
import Testing
import PGClient

/// serve's bounded resources (issue 45, item 3; `/healthz` of item 5), over real HTTP on
/// 127.0.0.1 and a real PostgreSQL: the dashboard's pool apart from the API's, the health
/// check on a connection of its own, the pools' bounded waits, the dashboard's statement
/// timeout, and the listener's header timeout, idle timeout and connection cap.
///
/// Nothing here is timed against the wall clock: slow searches are searches held on a lock the
/// test holds (seen waiting in pg_locks), and the deadlines below are only how long a test
/// waits for an event before it fails, many times what the event takes on an idle machine.
@Suite("Serve: limits")
struct ServeLimitsTests {
    /// How many sessions of this test's database wait for `mode` on `table`.
    static func waiting(_ db: PGConnection, on table: String, mode: String = "AccessShareLock") async throws -> Int {
        try await db.query("""
            SELECT count(*)::int FROM pg_locks
             WHERE relation = $1::regclass AND mode = $2 AND NOT granted
               AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """, [table, mode]).decode(Int.self, 0, 0) ?? 0
    }

    @Test("six dashboard searches held on a lock: an enqueue and /healthz are answered while the searches still wait")
    func searchesDoNotHoldTheAPI() async throws {
        // The searches wait as long as the test holds the lock (no statement or pool timeout
        // ends them first): what is shown is that the API and the probe never queue behind
        // them, whatever the machine's speed. Before the fix they shared one pool of 4.
        try await ServeHarness.with({ $0.dashboardQueryTimeout = .seconds(600); $0.databaseWait = .seconds(600) }) { serve, db in
            let locker = try await PGConnection.connect(serve.databaseURL, logger: TestDatabase.logger)
            try await locker.execute("BEGIN")
            try await locker.execute("LOCK TABLE pushq.devices IN ACCESS EXCLUSIVE MODE")
            let searchesAnswered = Counter()
            let searches = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<6 {
                        group.addTask {
                            let status = try await serve.call("GET", "/dashboard/search?q=user:ann\(i)", key: "read").status
                            searchesAnswered.value.add(1, ordering: .sequentiallyConsistent)
                            return status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            // The dashboard's connections (2 by default) are all in searches waiting on the lock.
            let held = try await LockWait.until(timeout: .seconds(60)) { try await Self.waiting(db, on: "pushq.devices") >= 2 }
            #expect(held, "the searches reached the lock")
            let waitingBefore = try await Self.waiting(db, on: "pushq.devices")

            let body = #"{"device_token":"\#(NotificationAPITests.token(7))","payload":{"aps":{"alert":"hi"}}}"#
            let enqueue = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            let health = try await serve.call("GET", "/healthz", key: nil)
            let ready = try await serve.call("GET", "/readyz", key: nil)
            #expect(enqueue.status == 201, "\(enqueue.body)")
            #expect(health.status == 200 && health.body == "ok\n", "\(health.status) \(health.body)")
            #expect(ready.status == 200 && ready.body == "ok\n", "\(ready.status) \(ready.body)")
            // Answered while the searches still wait: none of them has been answered yet.
            let answeredSearches = searchesAnswered.value.load(ordering: .sequentiallyConsistent)
            let waitingAfter = try await Self.waiting(db, on: "pushq.devices")
            #expect(answeredSearches == 0)
            #expect(waitingAfter == waitingBefore)

            try await locker.execute("ROLLBACK")
            await locker.close()
            let statuses = try await searches.value
            #expect(statuses == Array(repeating: 200, count: 6))
        }
    }

    @Test("a search stopped by the dashboard's statement timeout shows a page that says so (503), not a 500")
    func searchCutByStatementTimeout() async throws {
        // The search waits on a lock the test holds until it has the answer: only the
        // statement timeout (0.3 s) can end it.
        try await ServeHarness.with({ $0.dashboardQueryTimeout = .milliseconds(300) }) { serve, _ in
            let locker = try await PGConnection.connect(serve.databaseURL, logger: TestDatabase.logger)
            try await locker.execute("BEGIN")
            try await locker.execute("LOCK TABLE pushq.devices IN ACCESS EXCLUSIVE MODE")
            let answer = try await serve.call("GET", "/dashboard/search?q=user:ann", key: "read")
            try await locker.execute("ROLLBACK")
            await locker.close()
            #expect(answer.status == 503)
            #expect(answer.body.contains("The search was stopped after 0.3 s: narrow it"), "\(answer.body)")
            #expect(answer.headers["content-type"]?.hasPrefix("text/html") == true)
        }
    }

    @Test("every API connection held: the next request gets 503 database_busy with Retry-After once its wait runs out")
    func poolWaitRunsOut() async throws {
        // The one API connection is held by an enqueue waiting on a lock the test holds: no
        // slot can fall free before the test releases it, so the second request can only end
        // by its wait running out (0.5 s).
        try await ServeHarness.with({ $0.databaseConnections = 1; $0.databaseWait = .milliseconds(500) }) { serve, db in
            let locker = try await PGConnection.connect(serve.databaseURL, logger: TestDatabase.logger)
            try await locker.execute("BEGIN")
            try await locker.execute("LOCK TABLE pushq.notifications IN ACCESS EXCLUSIVE MODE")
            let body = #"{"device_token":"\#(NotificationAPITests.token(8))","payload":{"aps":{"alert":"hi"}}}"#
            let first = Task { try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body) }
            let held = try await LockWait.until(timeout: .seconds(60)) {
                try await Self.waiting(db, on: "pushq.notifications", mode: "RowExclusiveLock") >= 1
            }
            #expect(held, "the first enqueue holds the connection, waiting on the lock")
            let second = try await serve.call("POST", "/api/v1/notifications", key: "enqueue", json: body)
            try await locker.execute("ROLLBACK")
            await locker.close()
            #expect(second.status == 503, "\(second.status) \(second.body)")
            #expect(try second.error("code") == "database_busy")
            #expect(second.headers["retry-after"] == "1")
            #expect(try await first.value.status == 201)
        }
    }

    @Test("/healthz and /readyz with PostgreSQL unreachable: 503 database unavailable, none of libpq's words")
    func healthWithoutDatabase() async throws {
        let closed = try ClosedPort()
        let port = closed.port
        try await ServeHarness.with({ $0.databaseURL = "postgresql://healthuser:s3cret@127.0.0.1:\(port)/healthdb?connect_timeout=2" }) { serve, _ in
            for path in ["/healthz", "/readyz"] {
                let answer = try await serve.call("GET", path, key: nil)
                #expect(answer.status == 503, "\(path)")
                #expect(answer.body == "database unavailable\n", "\(path): \(answer.body)")
                for word in ["healthuser", "s3cret", "healthdb", "127.0.0.1", "\(port)", "connect", "refused"] {
                    #expect(!answer.body.contains(word), "\(path) shows \(word)")
                }
            }
        }
    }

    /// 500 slow clients (half a request head, or nothing) are all closed by the header timeout; a normal
    /// request is answered meanwhile
    @Test("500 slow clients are all closed by the header timeout; a normal request is answered meanwhile")
    func slowClientsClosed() async throws {
        // Header timeout 1 s; each socket must see the server close it within 120 s (the
        // deadline only bounds the test). Before the fix none was closed.
        try await ServeHarness.with({ $0.headerTimeout = .seconds(1); $0.idleTimeout = .seconds(600) }) { serve, _ in
            // Connected on a thread of Dispatch's: a connect can wait while the listen backlog is full.
            let clients = try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result {
                        try (0..<500).map { i in
                            let c = try RawClient(port: serve.port)
                            if i % 2 == 0 { try c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") }
                            return c
                        }
                    })
                }
            }
            defer { for c in clients { c.close() } }
            let normal = try await serve.call("GET", "/healthz", key: nil)
            #expect(normal.status == 200)
            let outcome = try await RawClient.awaitClosed(clients, within: .seconds(120))
            #expect(outcome.open == 0, "\(outcome.open) of 500 slow clients still open")
            #expect(outcome.answered == 0, "a slow client got an answer")
        }
    }

    @Test("over TLS too: clients that never finish the handshake or send half of one are closed by the header timeout")
    func slowTLSClientsClosed() async throws {
        let directory = NSTemporaryDirectory() + "pushq-serve-limits-\(UUID().uuidString)"
        let fixtures = try MockPushFixtures.generate(into: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await ServeHarness.with({
            $0.tls = (fixtures.serverCertificatePath, fixtures.serverKeyPath)
            $0.headerTimeout = .seconds(1)
        }) { serve, _ in
            var clients: [RawClient] = []
            defer { for c in clients { c.close() } }
            for i in 0..<20 {
                let c = try RawClient(port: serve.port)
                // The first bytes of a TLS record header (a handshake), and nothing more.
                if i % 2 == 0 { try c.send("\u{16}\u{03}\u{01}") }
                clients.append(c)
            }
            let outcome = try await RawClient.awaitClosed(clients, within: .seconds(120))
            #expect(outcome.open == 0, "\(outcome.open) of 20 slow TLS clients still open")
        }
    }

    @Test("an idle kept-alive connection is closed after the idle timeout")
    func idleConnectionClosed() async throws {
        try await ServeHarness.with({ $0.idleTimeout = .seconds(1); $0.headerTimeout = .seconds(600) }) { serve, _ in
            let c = try RawClient(port: serve.port)
            defer { c.close() }
            try c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await c.readAnswerHead().hasPrefix("HTTP/1.1 200"))
            let outcome = try await RawClient.awaitClosed([c], within: .seconds(120))
            #expect(outcome.open == 0)
        }
    }

    @Test("beyond the connection cap a new connection is closed at once, unanswered; a connection inside the cap is still served")
    func connectionCap() async throws {
        try await ServeHarness.with({ $0.maxConnections = 3; $0.headerTimeout = .seconds(600); $0.idleTimeout = .seconds(600) }) { serve, _ in
            var inside: [RawClient] = []
            defer { for c in inside { c.close() } }
            for i in 0..<3 {
                // Answered, so accepted and counted before the next one connects.
                let c = try RawClient(port: serve.port)
                try c.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                let head = try await c.readAnswerHead(what: "connection \(i + 1) of 3")
                #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
                inside.append(c)
            }
            let beyond = try RawClient(port: serve.port)
            defer { beyond.close() }
            try? beyond.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let outcome = try await RawClient.awaitClosed([beyond], within: .seconds(120))
            #expect(outcome.open == 0 && outcome.answered == 0, "the connection beyond the cap: \(outcome)")
            try inside[0].send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(try await inside[0].readAnswerHead(what: "the first connection's second request").hasPrefix("HTTP/1.1 200"))
        }
    }
}

/// A count shared by tasks.
final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// A port on 127.0.0.1 where nothing listens (bound, never listened on, so connects are refused).
final class ClosedPort: Sendable {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0 else { throw TestSetupError("bind: \(errno)") }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

/// A plain TCP client to 127.0.0.1 that sends what the test says, byte for byte.
final class RawClient: Sendable {
    let fd: Int32

    init(port: Int) throws {
        fd = try HTTPAnswer.connectLoopback(port: port)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TestSetupError("send: \(errno)") }
            sent += n
        }
    }

    /// The head of one answer (up to its blank line), at most 60 s; read on a thread of
    /// Dispatch's, never one of the cooperative pool, which serve's handlers need.
    func readAnswerHead(what: String = "the request") async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try self.blockingReadAnswerHead(what: what) }) }
        }
    }

    private func blockingReadAnswerHead(what: String) throws -> String {
        var received: [UInt8] = []
        var byte: UInt8 = 0
        while !received.ends(with: [13, 10, 13, 10]) {
            guard recv(fd, &byte, 1, 0) == 1 else { throw TestSetupError("no answer head for \(what) (\(received.count) bytes, errno \(errno))") }
            received.append(byte)
        }
        // The body of /healthz (`ok\n`, Content-Length 3): read so the next answer starts clean.
        let head = String(decoding: received, as: UTF8.self)
        if let length = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") })
            .flatMap({ Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }), length > 0 {
            var body = [UInt8](repeating: 0, count: length)
            var got = 0
            while got < length {
                let n = body[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { break }
                got += n
            }
        }
        return head
    }

    func close() { Foundation.close(fd) }

    /// Waits until the server has closed every one of `clients` (EOF or reset), at most
    /// `within`: how many are still open then, and how many got any byte from the server.
    static func awaitClosed(_ clients: [RawClient], within: Duration) async throws -> (open: Int, answered: Int) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                let deadline = ContinuousClock.now + within
                var open = Set(clients.indices)
                var answered = 0
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !open.isEmpty && ContinuousClock.now < deadline {
                    let watched = open.sorted()
                    var fds = watched.map { pollfd(fd: clients[$0].fd, events: Int16(POLLIN), revents: 0) }
                    let ready = poll(&fds, nfds_t(fds.count), 200)
                    if ready < 0 && errno != EINTR { continuation.resume(throwing: TestSetupError("poll: \(errno)")); return }
                    for (index, p) in zip(watched, fds) where p.revents != 0 {
                        let n = recv(p.fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                        if n > 0 { answered += 1; continue }
                        if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) { open.remove(index) }
                    }
                }
                continuation.resume(returning: (open.count, answered))
            }
        }
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
