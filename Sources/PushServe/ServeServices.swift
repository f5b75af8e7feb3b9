import Foundation
import Hummingbird
import Logging
import PushCore
import PushStore
import Synchronization

/// What every route group of `pushq serve` works with: the database, the configuration, the
/// logger, the failed-login throttle.
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
    let throttle: LoginGate

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
        self.throttle = LoginGate(LoginThrottle(limit: configuration.failedLoginLimit))
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

    /// The client's address: the peer's, or behind a proxy that terminates TLS the last address
    /// of `X-Forwarded-For` (the one the proxy added).
    func clientAddress(_ request: Request, _ context: ServeContext) -> String {
        guard configuration.proxyTerminatesTLS, let forwarded = request.headers[.xForwardedFor],
              let last = forwarded.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty else {
            return context.peerAddress
        }
        return last
    }
}

/// The process's ``LoginThrottle`` under a lock.
final class LoginGate: Sendable {
    private let state: Mutex<LoginThrottle>

    init(_ throttle: LoginThrottle) { state = Mutex(throttle) }

    /// Seconds until `client` may try again (rounded up), nil when it may now.
    func retryAfter(_ client: String) -> Int? {
        let now = Date().timeIntervalSince1970
        return state.withLock { $0.retryAfter(client: client, now: now) }.map { Int($0.rounded(.up)) }
    }

    func recordFailure(_ client: String) {
        let now = Date().timeIntervalSince1970
        state.withLock { $0.recordFailure(client: client, now: now) }
    }
}

/// A header's name (HTTPTypes' `HTTPField.Name`, reached through the `HTTPFields` Hummingbird exports).
typealias HeaderName = HTTPFields.Element.Name

extension HeaderName {
    static let xForwardedFor = HeaderName("X-Forwarded-For")!
    static let xCSRFToken = HeaderName(SessionCookie.csrfHeaderName)!
}
