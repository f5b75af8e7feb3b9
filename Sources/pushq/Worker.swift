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
            (PUSHQ_SHUTDOWN_SECONDS, default 5), records them, releases what it never sent, and exits 0.

            Faults that last cost no notification: when APNs cannot be reached or answers only 5xx, \
            or rejects a credential, or answers BadDeviceToken to most tokens, every worker holds that \
            (credential, environment) back (pushq.credential_pauses); its rows wait with their attempts \
            given back, and one worker probes it at growing intervals until it answers. An APNs that cannot \
            be reached at start is such an outage, not an error. `pushq status` shows holds and live workers.

            Rows with provider 'fcm' go to Firebase Cloud Messaging (HTTP v1) with the FCM credential \
            they name (PUSHQ_FCM_SERVICE_ACCOUNT_FILE for the default one, or "type": "fcm" entries in \
            PUSHQ_CREDENTIALS_FILE); a worker sends only the providers it has credentials for.

            Tuning variables (defaults in brackets): PUSHQ_APNS_CONNECTIONS [2], PUSHQ_APNS_STREAMS [500] \
            (streams in flight per connection; APNs allows 1000), PUSHQ_FCM_STREAMS [100] (per FCM connection; \
            FCM allows 100), PUSHQ_APNS_REQUEST_TIMEOUT [30], PUSHQ_APNS_CONNECT_TIMEOUT [10], \
            PUSHQ_CLAIM_BATCH [500], PUSHQ_PREFETCH [500], PUSHQ_LEASE_SECONDS [120], PUSHQ_POLL_SECONDS [1], \
            PUSHQ_RETRY_BASE_SECONDS [1], PUSHQ_RETRY_CAP_SECONDS [600], PUSHQ_PAUSE_BASE_SECONDS [30], \
            PUSHQ_PAUSE_CAP_SECONDS [900], PUSHQ_OUTAGE_PROBE_BASE_SECONDS [1], PUSHQ_OUTAGE_PROBE_CAP_SECONDS [45], \
            PUSHQ_SHUTDOWN_SECONDS [5].

            Retention: final rows are deleted by whichever worker holds the pruner's advisory lock, \
            in batches of 1000: sent rows after PUSHQ_RETAIN_SENT_SECONDS [86400], failed, expired and \
            cancelled rows after PUSHQ_RETAIN_FINAL_SECONDS [604800]. Logs: PUSHQ_LOG_FORMAT [text] \
            (or json), PUSHQ_LOG_LEVEL [info].

            With --http-addr (PUSHQ_HTTP_ADDR), e.g. 127.0.0.1:9464, the worker serves /metrics \
            (Prometheus), /healthz (its loops are alive) and /readyz (PostgreSQL connected, not draining, \
            a credential not paused); off when unset.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var credentials: CredentialOptions

    @Option(help: ArgumentHelp("Default apns-topic (bundle id) for rows whose topic is NULL.", discussion: "Defaults to $PUSHQ_APNS_TOPIC."))
    var topic: String?
    @Option(help: ArgumentHelp("Default environment for rows whose environment is NULL: production or development.",
                               discussion: "Defaults to $PUSHQ_APNS_ENVIRONMENT, else production (the environment of a device registered without one)."))
    var environment: String?
    @Option(help: ArgumentHelp("Base URL replacing Apple's hosts (a mock or a proxy).", discussion: "Defaults to $PUSHQ_APNS_URL."))
    var apnsURL: String?
    @Option(help: ArgumentHelp("Base URL replacing https://fcm.googleapis.com (a mock or a proxy).", discussion: "Defaults to $PUSHQ_FCM_URL."))
    var fcmURL: String?
    @Option(help: ArgumentHelp("Extra trusted CA certificate (PEM), e.g. a mock's; trusted for APNs, FCM and FCM's token endpoint.",
                               discussion: "Defaults to $PUSHQ_APNS_CA_FILE."))
    var caFile: String?
    @Option(help: ArgumentHelp("Worker id written to locked_by.", discussion: "Defaults to $PUSHQ_WORKER_ID, else host:pid."))
    var workerID: String?
    @Option(help: ArgumentHelp("Serve /metrics, /healthz and /readyz on host:port, e.g. 127.0.0.1:9464.",
                               discussion: "Defaults to $PUSHQ_HTTP_ADDR; off when neither is set."))
    var httpAddr: String?

    func run() async throws {
        let logger = try database.makeLogger(label: "pushq.worker")
        var env = ProcessInfo.processInfo.environment
        if let environment { env["PUSHQ_APNS_ENVIRONMENT"] = environment }
        if let apnsURL { env["PUSHQ_APNS_URL"] = apnsURL }
        if let caFile { env["PUSHQ_APNS_CA_FILE"] = caFile }
        var configuration: WorkerConfiguration
        let httpAddress = try httpAddr.flatMap { $0.isEmpty ? nil : try HTTPAddress(parsing: $0, setting: "--http-addr") }
            ?? Environment.nonEmpty("PUSHQ_HTTP_ADDR").map { try HTTPAddress(parsing: $0, setting: "PUSHQ_HTTP_ADDR") }
        do {
            let sender = try PushSenderConfiguration.fromEnvironment(env)
            let resolved = try credentials.resolve()
            configuration = WorkerConfiguration(
                databaseURL: try database.resolvedURL(),
                workerID: workerID ?? Environment.nonEmpty("PUSHQ_WORKER_ID") ?? Self.defaultWorkerID(),
                credentials: resolved.apns,
                defaultTopic: topic ?? Environment.nonEmpty("PUSHQ_APNS_TOPIC"),
                sender: sender)
            configuration.credentialTopics = resolved.topics
            configuration.fcmCredentials = resolved.fcm
            configuration.fcmBaseURL = fcmURL.flatMap { $0.isEmpty ? nil : $0 } ?? Environment.nonEmpty("PUSHQ_FCM_URL")
            try configuration.applyTuning(from: env)
            try configuration.validate()
        } catch let error as PushTransportError {
            throw ValidationError(error.description)
        } catch let error as WorkerError {
            throw ValidationError(error.description)
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
