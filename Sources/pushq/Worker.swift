import ArgumentParser
import Dispatch
import Foundation
import Logging
import Prometheus
import ServiceLifecycle
import PushCore
import PushTransport
import PushWorker

struct Worker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Claim notifications from PostgreSQL and send them to APNs and FCM until SIGINT/SIGTERM.",
        discussion: """
            Run as many workers as you like, on any hosts: they share the queue with \
            FOR UPDATE SKIP LOCKED and never send a row twice while healthy. A worker that dies \
            loses nothing: its rows return to the queue when their lease runs out.

            On SIGTERM or SIGINT the worker stops claiming, waits for answers in flight \
            (\(SettingKey.shutdownSeconds.bracketed)), records them, releases what it never sent, and exits 0.

            Faults that last cost no notification: when APNs cannot be reached or answers only 5xx, \
            or rejects a credential, or answers BadDeviceToken to most tokens, every worker holds that \
            (credential, environment) back (pushq.credential_pauses); its rows wait with their attempts \
            given back, and one worker probes it at growing intervals until it answers. An APNs that cannot \
            be reached at start is such an outage, not an error. `pushq status` shows holds and live workers.

            Rows with provider 'fcm' go to Firebase Cloud Messaging (HTTP v1) with the FCM credential \
            they name (PUSHQ_FCM_SERVICE_ACCOUNT_FILE for the default one, or "type": "fcm" entries in \
            PUSHQ_CREDENTIALS_FILE); a worker sends only the providers it has credentials for.
            Rows with provider 'webpush' go to the push service of their endpoint, signed with the Web Push \
            credential they name (PUSHQ_WEBPUSH_VAPID_KEY_FILE with PUSHQ_WEBPUSH_VAPID_SUBJECT for the default \
            one, or "type": "webpush" entries); docs/webpush.md.

            Tuning variables (defaults in brackets): \(SettingKey.tuning.map(\.bracketed).joined(separator: ", ")). \
            The settings every provider shares had APNs names, still read: \(SettingKey.renamed).

            Retention: final rows are deleted by whichever worker holds the pruner's advisory lock, \
            in batches of 1000: sent rows after \(SettingKey.retainSentSeconds.bracketed), failed, expired and \
            cancelled rows after \(SettingKey.retainFinalSeconds.bracketed). Logs: \(SettingKey.logFormat.bracketed) \
            (or json), \(SettingKey.logLevel.bracketed). Every variable and flag: docs/configuration.md.

            With --http-addr (PUSHQ_HTTP_ADDR), e.g. 127.0.0.1:9464, the worker serves /metrics \
            (Prometheus), /healthz (its loops are alive) and /readyz (PostgreSQL connected, not draining, \
            a credential not paused); off when unset.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var credentials: CredentialOptions

    @Option(help: SettingKey.apnsTopic.help("The push type's suffix is added (.voip, .complication...)."))
    var topic: String?
    @Option(help: SettingKey.apnsEnvironment.help("Production is the environment of a device registered without one."))
    var environment: String?
    @Option(help: SettingKey.apnsURL.help())
    var apnsURL: String?
    @Option(help: SettingKey.apnsChannelsURL.help())
    var apnsChannelsURL: String?
    @Option(help: SettingKey.fcmURL.help())
    var fcmURL: String?
    @Option(help: SettingKey.caFile.help())
    var caFile: String?
    @Option(help: SettingKey.connections.help())
    var connections: String?
    @Option(help: SettingKey.requestTimeout.help())
    var requestTimeout: String?
    @Option(help: SettingKey.connectTimeout.help())
    var connectTimeout: String?
    @Option(help: SettingKey.workerID.help())
    var workerID: String?
    @Option(help: SettingKey.httpAddr.help("E.g. 127.0.0.1:9464; port 0 takes any free port."))
    var httpAddr: String?
    @Option(name: .customLong("webpush-ca-file"), help: SettingKey.webPushCAFile.help())
    var webPushCAFile: String?
    @Option(name: .customLong("webpush-allowed-origins"), help: SettingKey.webPushAllowedOrigins.help(
        "E.g. https://push.internal.example:8443 for a self-hosted push service on a private address. Empty: every origin checked."))
    var webPushAllowedOrigins: String?
    @Option(name: .customLong("webpush-max-connections"), help: SettingKey.webPushMaxConnections.help())
    var webPushMaxConnections: String?

    /// The flags given, for ``Settings``.
    var flags: [SettingKey: String?] {
        credentials.flags.merging([.apnsTopic: topic, .apnsEnvironment: environment, .apnsURL: apnsURL, .apnsChannelsURL: apnsChannelsURL, .fcmURL: fcmURL,
                                   .caFile: caFile, .connections: connections, .requestTimeout: requestTimeout,
                                   .connectTimeout: connectTimeout, .workerID: workerID, .httpAddr: httpAddr,
                                   .webPushCAFile: webPushCAFile, .webPushAllowedOrigins: webPushAllowedOrigins,
                                   .webPushMaxConnections: webPushMaxConnections]) { _, ours in ours }
    }

    func run() async throws {
        let settings = database.settings(flags)
        let logger = try settings.logger(label: "pushq.worker")
        let httpAddress = try settings.httpAddress()
        let configuration: WorkerConfiguration
        do {
            configuration = try settings.workerConfiguration(defaultWorkerID: Self.defaultWorkerID)
        } catch let error as PushTransportError {
            throw CommandFailure(error.description)
        } catch let error as WorkerError {
            throw CommandFailure(error.description)
        }
        let registry = PrometheusCollectorRegistry()
        let metrics = httpAddress == nil ? WorkerMetrics() : WorkerMetrics(factory: PrometheusFactory(registry: registry))
        let worker = PushWorker(configuration: configuration, logger: logger, metrics: metrics)
        let signals = Self.onTermination { worker.requestStop() }
        defer { for s in signals { s.cancel() } }
        do {
            if let httpAddress {
                var httpLogger = logger
                httpLogger[metadataKey: "http.address"] = "\(httpAddress)"
                try await Self.run(worker, with: MetricsServer(address: httpAddress, registry: registry, worker: worker, logger: httpLogger))
            } else {
                try await worker.run()
            }
        } catch let error as WorkerError {
            logger.critical("\(error.description)")
            throw ExitCode(1)
        } catch let error as PushTransportError {
            logger.critical("cannot set up a sender: \(error.description)")
            throw ExitCode(1)
        }
    }

    /// Runs the worker and its HTTP listener; the listener shuts down gracefully when the worker
    /// has stopped. A listener that cannot start (address in use) stops the worker and fails the command.
    static func run(_ worker: PushWorker, with server: MetricsServer) async throws {
        let services = ServiceGroup(configuration: .init(services: [server.service()], gracefulShutdownSignals: [], logger: server.logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await services.run()
                } catch {
                    worker.requestStop()
                    throw CommandFailure("cannot serve HTTP on \(server.address) (--http-addr, PUSHQ_HTTP_ADDR): \(error)")
                }
            }
            try await worker.run()
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    static func defaultWorkerID() -> String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(host):\(getpid())"
    }

    /// Calls `handler` on SIGINT and SIGTERM (instead of dying).
    static func onTermination(_ handler: @escaping @Sendable () -> Void) -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}
