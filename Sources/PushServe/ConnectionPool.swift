import Logging
import PushStore

/// The PostgreSQL connections of `pushq serve`: at most `capacity`, opened on first need and
/// kept, each lent to one request at a time. A request that finds them all lent waits for one.
///
/// Each connection is a `PGConnection` (its libpq calls on a thread of its own), with a
/// server-side statement timeout of 30 s: nothing serve runs can hold a session longer.
public actor ConnectionPool {
    private let url: String
    private let logger: Logger
    private let capacity: Int
    private var idle: [PGConnection] = []
    private var opened = 0
    /// Requests waiting for a connection: resumed with one given back, or with nil when a slot
    /// fell free (an open that failed), to open one themselves.
    private var waiting: [CheckedContinuation<PGConnection?, Never>] = []

    /// The server-side `statement_timeout` of serve's sessions.
    public static let statementTimeout: Duration = .seconds(30)

    public init(url: String, capacity: Int, logger: Logger) {
        self.url = url
        self.capacity = max(1, capacity)
        self.logger = logger
    }

    /// Runs `body` with a connection of the pool, given back when it returns or throws.
    ///
    /// - Throws: `PGError` when a connection cannot be opened; what `body` throws.
    public nonisolated func withConnection<T: Sendable>(_ body: (PGConnection) async throws -> T) async throws -> T {
        let connection = try await acquire()
        do {
            let value = try await body(connection)
            await giveBack(connection)
            return value
        } catch {
            await giveBack(connection)
            throw error
        }
    }

    private func acquire() async throws -> PGConnection {
        while true {
            if let connection = idle.popLast() { return connection }
            if opened < capacity { break }
            if let connection = await withCheckedContinuation({ waiting.append($0) }) { return connection }
        }
        opened += 1
        do {
            return try await PGConnection.connect(url, logger: logger, statementTimeout: Self.statementTimeout)
        } catch {
            opened -= 1
            if !waiting.isEmpty { waiting.removeFirst().resume(returning: nil) }
            throw error
        }
    }

    private func giveBack(_ connection: PGConnection) async {
        if await connection.inTransaction {
            // A body that left a transaction open (it should not): never lend it on like that.
            _ = try? await connection.execute("ROLLBACK")
        }
        if waiting.isEmpty {
            idle.append(connection)
        } else {
            waiting.removeFirst().resume(returning: connection)
        }
    }

    /// Closes the idle connections (at shutdown, once no request is in progress).
    public func close() async {
        for connection in idle { await connection.close() }
        idle.removeAll()
    }
}
