import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import PushCore
import ServiceLifecycle

/// `pushq serve`: one Hummingbird application serving the HTTP API (`/api/v1`), the login form
/// and the dashboard, on HTTP/1.1, over TLS when given a certificate. Reads and writes only
/// through pushq's tables and functions, with the connections of a ``ConnectionPool``.
///
/// The module, for a reader new to it: the router is built from route groups (``ServeRoutes``:
/// `HealthRoutes`, `LoginRoutes`, `API/APIRoutes` with `+Notifications` and `+Devices`, and the
/// dashboard's `Dashboard/DashboardRoutes`) behind ``AuthMiddleware`` (bearer key or session
/// cookie, CSRF, the budget of wrong keys). A ``ServeContext`` carries the caller (key, scope);
/// ``ServeServices`` holds the API's and the dashboard's ``ConnectionPool``s (each with an acquire
/// timeout and a bounded queue), the ``HealthProbe`` on a connection of its own, and `audited`.
/// The listener's header and idle timeouts and connection cap are `ConnectionLimits.swift`.
/// The dashboard's pages are pure functions from what the store read to HTML
/// (`DashboardPage+Overview`, `+Failures`, `+Search`, `+Notification`; the frame in
/// `DashboardLayout`, the chart in `MinuteChart`, the one script and stylesheet in
/// `DashboardAssets`), through the `HTML` type that escapes every interpolated `String`; the
/// operator's actions are `DashboardAction`. What is pure is in `PushCore/Serve/` (`APIScope`,
/// `ListenerExposure`, `FailedKeyBudget`, `TrustedProxies`, `ConstraintExplanation`: the one place
/// the API's 400s come from); the statements in `PushStore/Serve/` (keys and sessions, audit,
/// enqueue as one `INSERT … SELECT FROM unnest` per set of columns, cancel, devices, the
/// dashboard's queries, whose plans `ServeQueryTests` and `DashboardQueryTests` check on a million
/// rows). The OpenAPI document is `API/openapi.json`, embedded.
public struct ServeApplication: Sendable {
    /// Every route group, registered in this order behind ``AuthMiddleware``. The dashboard's
    /// group (`Dashboard/`) is added here.
    static let routeGroups: [any ServeRoutes] = [HealthRoutes(), LoginRoutes(), APIRoutes(), DashboardRoutes()]

    public let services: ServeServices
    private let server: HTTPServerBuilder
    /// serve's own certificate and key, nil without TLS (``reloadCertificate()``).
    private let certificate: ServeCertificate?

    /// - Throws: ``ServeError`` when the address is not loopback and there is neither TLS nor a
    ///   proxy said to terminate it, or when the certificate or key cannot be loaded.
    public init(configuration: ServeConfiguration, logger: Logger) throws {
        if case .refused(let why) = configuration.exposure { throw ServeError(why) }
        services = ServeServices(configuration: configuration, logger: logger)
        let http1 = HTTPServerBuilder.http1(within: configuration.connectionLimits, logger: logger)
        if let tls = configuration.tls {
            let certificate = try ServeCertificate(certificateFile: tls.certificateFile, keyFile: tls.keyFile, logger: logger)
            self.certificate = certificate
            server = try .tls(http1, tlsConfiguration: certificate.tlsConfiguration())
        } else {
            certificate = nil
            server = http1
        }
    }

    /// Reads serve's certificate and key again now (`pushq serve` on SIGHUP), even if their
    /// files look unchanged; a pair that cannot be used is logged and the last good one stays.
    /// Nothing without TLS.
    public func reloadCertificate() {
        certificate?.reload()
    }

    /// The router with every route group and the middleware.
    public func router() -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        if services.configuration.tls != nil { router.add(middleware: StrictTransportSecurity()) }
        router.add(middleware: AuthMiddleware(services: services))
        router.add(middleware: APINotFound())
        for group in Self.routeGroups { group.register(on: router, services: services) }
        return router
    }

    /// The server as a service: serves from `run()` until a graceful shutdown of its
    /// `ServiceGroup`. `onListening` gets the port bound (the one chosen, for port 0).
    public func service(onListening: @escaping @Sendable (Int) -> Void = { _ in }) -> some Service {
        let c = services.configuration
        let logger = services.logger
        let scheme = c.tls == nil ? "http" : "https"
        return Application(
            router: router(), server: server,
            configuration: .init(address: .hostname(c.host, port: c.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? c.port
                let host = c.host.contains(":") ? "[\(c.host)]" : c.host
                logger.info("pushq serve listening", metadata: ["http.address": "\(host):\(port)", "http.scheme": "\(scheme)"])
                onListening(port)
            },
            logger: logger)
    }

    /// serve's TLS: TLS 1.2 at least, the certificate and key re-read when their files change
    /// (``ServeCertificate``).
    ///
    /// - Throws: ``ServeError`` naming the variable and file that cannot be read or used.
    static func tlsConfiguration(certificateFile: String, keyFile: String, logger: Logger) throws -> TLSConfiguration {
        try ServeCertificate(certificateFile: certificateFile, keyFile: keyFile, logger: logger).tlsConfiguration()
    }
}

/// Why `pushq serve` cannot start, in one sentence naming the setting or file.
public struct ServeError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
