import ArgumentParser
import Dispatch
import Foundation
import Logging
import PushServe
import PushStore
import ServiceLifecycle
import PGClient

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the HTTP API (/api/v1) and the dashboard until SIGINT/SIGTERM; SIGHUP re-reads the TLS certificate.",
        discussion: """
            One process, any number beside the workers: it reads and writes only through pushq's \
            tables and functions, with bounded, index-backed queries, and never holds a lock a worker \
            needs. Every request but /healthz needs a key (pushq api-key create NAME --scope S): \
            Authorization: Bearer <key>, or the dashboard's login form.

            Listens on --http-addr (PUSHQ_HTTP_ADDR), 127.0.0.1:8080 by default. On an address that \
            is not loopback it refuses to start without TLS (--http-tls-cert and --http-tls-key) unless \
            --tls-terminated-by-proxy says a proxy in front terminates TLS. docs/api.md describes the API.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: SettingKey.httpAddr.help("E.g. 0.0.0.0:8080 in a container; port 0 takes any free port."))
    var httpAddr: String?
    @Option(help: SettingKey.httpTLSCert.help())
    var httpTlsCert: String?
    @Option(help: SettingKey.httpTLSKey.help("Prefer the variable, or a file only serve can read."))
    var httpTlsKey: String?
    @Flag(help: SettingKey.tlsTerminatedByProxy.help())
    var tlsTerminatedByProxy = false
    @Option(help: SettingKey.serveConnections.help())
    var dbConnections: String?
    @Option(help: SettingKey.httpTrustedProxies.help("E.g. 10.0.0.0/8 for an ingress in the cluster; without it X-Forwarded-For is ignored."))
    var httpTrustedProxies: String?
    @Option(help: SettingKey.serveDashboardConnections.help())
    var dashboardDbConnections: String?
    @Option(help: SettingKey.serveDatabaseWait.help())
    var dbWait: String?
    @Option(help: SettingKey.serveDatabaseQueue.help())
    var dbQueue: String?
    @Option(help: SettingKey.dashboardQueryTimeout.help())
    var dashboardQueryTimeout: String?
    @Option(help: SettingKey.httpIdleTimeout.help())
    var httpIdleTimeout: String?
    @Option(help: SettingKey.httpHeaderTimeout.help())
    var httpHeaderTimeout: String?
    @Option(help: SettingKey.httpMaxConnections.help())
    var httpMaxConnections: String?

    /// The flags given, for ``Settings``.
    var flags: [SettingKey: String?] {
        [.httpAddr: httpAddr, .httpTLSCert: httpTlsCert, .httpTLSKey: httpTlsKey, .tlsTerminatedByProxy: tlsTerminatedByProxy ? "true" : nil,
         .httpTrustedProxies: httpTrustedProxies,
         .serveConnections: dbConnections, .serveDashboardConnections: dashboardDbConnections, .serveDatabaseWait: dbWait,
         .serveDatabaseQueue: dbQueue, .dashboardQueryTimeout: dashboardQueryTimeout, .httpIdleTimeout: httpIdleTimeout,
         .httpHeaderTimeout: httpHeaderTimeout, .httpMaxConnections: httpMaxConnections]
    }

    func run() async throws {
        let settings = database.settings(flags)
        let logger = try settings.logger(label: "pushq.serve")
        let configuration = try settings.serveConfiguration()
        let application: ServeApplication
        do {
            application = try ServeApplication(configuration: configuration, logger: logger)
        } catch let error as ServeError {
            throw CommandFailure(error.description)
        }
        let c = try await PGConnection.connect(configuration.databaseURL, logger: logger)
        let refusal: String?
        do {
            refusal = try await c.closing { try await $0.schemaRefusal(program: "serve") }
        } catch let error as PGError where error.sqlState == "42501" {
            // A role of its own without its grants (docs/deploy.md, Database roles).
            throw CommandFailure("\(error): grant serve's role what it needs: `pushq migrate --print-grants <role> --for serve` prints the GRANT statements; run them as the schema's owner")
        }
        if let refusal { throw CommandFailure(refusal) }
        await application.services.health.open()
        // SIGHUP re-reads the TLS certificate and key (a renewal written in place), and never ends serve.
        signal(SIGHUP, SIG_IGN)
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        hangup.setEventHandler {
            logger.info(configuration.tls == nil ? "SIGHUP: serve has no TLS certificate of its own to read again"
                                                  : "SIGHUP: reading serve's TLS certificate and key again")
            application.reloadCertificate()
        }
        hangup.resume()
        defer { hangup.cancel() }
        let group = ServiceGroup(configuration: .init(services: [.init(service: application.service())],
                                                      gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        await application.services.close()
    }
}
