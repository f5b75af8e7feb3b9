import Foundation
import Hummingbird
import Logging
import PushCore
import PushStore
import Synchronization
import PGClient

/// What every route group of `pushq serve` works with: the database, the configuration, the
/// logger, the budget of failed key look-ups.
public struct ServeServices: Sendable {
    public let configuration: ServeConfiguration
    /// The server's PostgreSQL connections: every query of a request goes through it.
    public let pool: ConnectionPool
    /// The dashboard's reads: a pool of their own (``ServeConfiguration/dashboardConnections``),
    /// whose sessions stop a statement after ``ServeConfiguration/dashboardQueryTimeout``.
    public let dashboardPool: ConnectionPool
    /// `/healthz` and `/readyz`: a connection of its own, no pool slot.
    public let health: HealthProbe
    public let logger: Logger
    let failedKeys: FailedKeyGate

    public init(configuration: ServeConfiguration, logger: Logger) {
        self.configuration = configuration
        let wait = (configuration.databaseWait, configuration.databaseQueue)
        self.pool = ConnectionPool(url: configuration.databaseURL, capacity: configuration.databaseConnections,
                                   limits: .init(acquireTimeout: wait.0, maxWaiting: wait.1), name: "API", logger: logger)
        self.dashboardPool = ConnectionPool(url: configuration.databaseURL, capacity: configuration.dashboardConnections,
                                            limits: .init(statementTimeout: configuration.dashboardQueryTimeout, acquireTimeout: wait.0, maxWaiting: wait.1),
                                            name: "dashboard", logger: logger)
        self.health = HealthProbe(url: configuration.databaseURL, logger: logger)
        self.logger = logger
        self.failedKeys = FailedKeyGate(configuration.failedKeyBudget)
    }

    /// Closes the pools' idle connections and the health probe's (at shutdown).
    public func close() async {
        await pool.close()
        await dashboardPool.close()
        await health.close()
    }

    /// Runs `change` (which writes its rows and ``AuditEntry`` in one transaction, as the store's
    /// `cancelNotification(id:audit:)` does) on a pooled connection, and logs the action (its name
    /// and target, never a key or token).
    public func audited<T: Sendable>(_ entry: AuditEntry, _ change: (PGConnection) async throws -> T) async throws -> T {
        let value = try await pool.withConnection(change)
        logger.info("audited action", metadata: ["serve.actor": "\(entry.actor)", "serve.action": "\(entry.action)",
                                                 "serve.target": "\(entry.target)", "serve.via": "\(entry.via)"])
        return value
    }

    /// The client's address: the first hop from the right of (`X-Forwarded-For`'s entries, the
    /// TCP peer) that is not one of ``ServeConfiguration/trustedProxies``; the peer when none is
    /// trusted (``TrustedProxies``).
    func clientAddress(_ request: Request, _ context: ServeContext) -> String {
        configuration.trustedProxies.client(forwardedFor: request.headers[values: .xForwardedFor], peer: context.peerAddress)
    }

    /// Counts a key that was looked up and not found (`what`: "API key" or "dashboard login")
    /// against the process's ``FailedKeyBudget``: logs it (with the failures throttled since the
    /// last one logged) and answers nil for a 401, or, beyond the budget, the seconds a 429 asks
    /// the client to wait (counted, not logged).
    func refusedKey(_ what: String, _ request: Request, _ context: ServeContext) -> Int? {
        switch failedKeys.failure() {
        case .refuse(let throttledBefore):
            var metadata: Logger.Metadata = ["serve.client": "\(clientAddress(request, context))", "serve.path": "\(request.uri.path)"]
            if throttledBefore > 0 { metadata["serve.throttled_before"] = "\(throttledBefore)" }
            logger.notice("refused \(what)", metadata: metadata)
            return nil
        case .throttle(let seconds):
            return seconds
        }
    }
}

/// The process's ``FailedKeyBudget`` under a lock, on the wall clock.
final class FailedKeyGate: Sendable {
    private let state: Mutex<FailedKeyBudget>

    init(_ budget: FailedKeyBudget) { state = Mutex(budget) }

    func failure() -> FailedKeyBudget.Verdict {
        let now = Date().timeIntervalSince1970
        return state.withLock { $0.failure(now: now) }
    }
}

/// A header's name (HTTPTypes' `HTTPField.Name`, reached through the `HTTPFields` Hummingbird exports).
typealias HeaderName = HTTPFields.Element.Name

extension HeaderName {
    static let xForwardedFor = HeaderName("X-Forwarded-For")!
    static let xCSRFToken = HeaderName(SessionCookie.csrfHeaderName)!
}
