import Foundation
import Hummingbird
import Logging
import PushStore
import PGClient

/// The PostgreSQL connections of one part of `pushq serve` (the API's, the dashboard's): at most
/// `capacity`, opened on first need and kept, each lent to one request at a time.
///
/// A request that finds them all lent waits for one, at most ``Limits/acquireTimeout``, behind
/// at most ``Limits/maxWaiting`` others; beyond either it gets ``DatabaseBusy`` (503
/// `database_busy` with `Retry-After`) instead of a queue that grows while the database is slow.
/// Each connection is a `PGConnection` (its libpq calls on a thread of its own) with a
/// server-side statement timeout: nothing serve runs through the pool can hold a session longer.
public actor ConnectionPool {
    /// How long and behind how many others a request waits for a connection.
    public struct Limits: Sendable {
        /// The server-side `statement_timeout` of the pool's sessions. Defaults to 30 s.
        public var statementTimeout: Duration
        /// How long a request waits for a connection before ``DatabaseBusy``. Defaults to 5 s.
        public var acquireTimeout: Duration
        /// Requests that may wait at once; the next one gets ``DatabaseBusy`` at once. Defaults to 100.
        public var maxWaiting: Int

        public init(statementTimeout: Duration = .seconds(30), acquireTimeout: Duration = .seconds(5), maxWaiting: Int = 100) {
            self.statementTimeout = statementTimeout
            self.acquireTimeout = acquireTimeout
            self.maxWaiting = maxWaiting
        }
    }

    private let url: String
    private let logger: Logger
    private let capacity: Int
    public nonisolated let limits: Limits
    /// What the pool is for, in ``DatabaseBusy``'s message and the logs (`API`, `dashboard`).
    public nonisolated let name: String
    private var idle: [PGConnection] = []
    private var opened = 0
    /// Requests waiting for a connection, oldest first: resumed with one given back, with nil
    /// when a slot fell free (an open that failed), to open one themselves, or with
    /// ``DatabaseBusy`` when their wait ran out.
    private var waiting: [(id: UInt64, continuation: CheckedContinuation<PGConnection?, any Error>, timer: Task<Void, Never>)] = []
    private var nextWaiter: UInt64 = 0

    public init(url: String, capacity: Int, limits: Limits = Limits(), name: String = "API", logger: Logger) {
        self.url = url
        self.capacity = max(1, capacity)
        self.limits = limits
        self.name = name
        self.logger = logger
    }

    /// Runs `body` with a connection of the pool, given back when it returns or throws.
    ///
    /// - Throws: ``DatabaseBusy`` when no connection fell free in time or too many requests
    ///   wait already; `PGError` when a connection cannot be opened; what `body` throws.
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
            guard waiting.count < limits.maxWaiting else {
                throw DatabaseBusy(pool: name, reason: "every place in line (\(limits.maxWaiting)) is taken")
            }
            if let connection = try await wait() { return connection }
        }
        opened += 1
        do {
            return try await PGConnection.connect(url, logger: logger, statementTimeout: limits.statementTimeout)
        } catch {
            opened -= 1
            resumeFirst(with: nil)
            throw error
        }
    }

    /// Waits in line for a connection, at most ``Limits/acquireTimeout``.
    private func wait() async throws -> PGConnection? {
        nextWaiter += 1
        let id = nextWaiter
        let timeout = limits.acquireTimeout
        return try await withCheckedThrowingContinuation { continuation in
            let timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                await self?.expire(id)
            }
            waiting.append((id, continuation, timer))
        }
    }

    private func expire(_ id: UInt64) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        let waiter = waiting.remove(at: index)
        waiter.continuation.resume(throwing: DatabaseBusy(pool: name, reason: "no connection fell free within \(limits.acquireTimeout)"))
    }

    private func resumeFirst(with connection: PGConnection?) {
        guard !waiting.isEmpty else { return }
        let waiter = waiting.removeFirst()
        waiter.timer.cancel()
        waiter.continuation.resume(returning: connection)
    }

    private func giveBack(_ connection: PGConnection) async {
        if await connection.inTransaction {
            // A body that left a transaction open (it should not): never lend it on like that.
            _ = try? await connection.execute("ROLLBACK")
        }
        if waiting.isEmpty {
            idle.append(connection)
        } else {
            resumeFirst(with: connection)
        }
    }

    /// Closes the idle connections (at shutdown, once no request is in progress).
    public func close() async {
        for connection in idle { await connection.close() }
        idle.removeAll()
    }
}

/// Every connection of a pool stayed lent while a request waited its turn, or too many requests
/// waited already: `503 database_busy` with `Retry-After: 1`, as JSON (the dashboard shows a page).
public struct DatabaseBusy: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    /// The pool's name (`API`, `dashboard`).
    public var pool: String
    public var reason: String

    public var description: String { "the \(pool) database connections are all busy (\(reason)): try again" }

    public var status: HTTPResponse.Status { .serviceUnavailable }

    public var headers: HTTPFields { [.retryAfter: "1"] }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var error = APIError(.serviceUnavailable, code: "database_busy", message: description)
        error.headers = headers
        return try error.response(from: request, context: context)
    }
}
