import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import Synchronization
import PGClient

/// The claim → send → record pipeline of one `pushq worker` process.
///
/// Six loops share the work, each but the pace loop with a PostgreSQL connection of its own (each
/// connection runs libpq on its own thread, never on Swift's cooperative pool):
/// - **claim**: claims due rows (`FOR UPDATE SKIP LOCKED`), only as many as the HTTP/2
///   window has room for plus a prefetch, and hands them to the senders in batches;
/// - **complete**: takes the senders' answers in batches, decides each row's fate with the
///   pure ``Decider`` (PushCore), and writes them back in one fenced transaction per batch,
///   with token invalidations and throttles and the endpoints to hold or resume;
/// - **listen**: waits for the insert trigger's `NOTIFY` so an idle worker claims at once, and
///   for the lanes' (`pushq_lanes`): a paused lane's requests not yet started are given back, a
///   cancelled lane's ended (``ListenLoop``; ``applyLanes(_:)``, ``laneCancelled(_:)``);
/// - **pace**: starts the requests of capped lanes and credentials no faster than their caps
///   (``paceLoop()``, ``SendPacer``);
/// - **channels**: creates and deletes the broadcast channels of `pushq.channels` at Apple,
///   and runs the nightly reconciliation with Apple's list (``ChannelLoop``);
/// - **prune**: every ``WorkerConfiguration/heartbeatSeconds``, if elected (an advisory lock:
///   one pruner across all workers), deletes final rows past their retention in short batches
///   (``PruneLoop``).
///
/// The claim loop also takes the probes of held endpoints (paused credentials, bursts,
/// outages) and runs the ``Upkeep`` between claims: every ``WorkerConfiguration/heartbeatSeconds``
/// it marks the worker alive in `pushq.workers`, and it expires waiting rows that no worker
/// claims and gives the rows of lapsed leases back to the claim.
///
/// ``run()`` returns after ``requestStop()``: claiming stops, answers in flight are awaited
/// up to ``WorkerConfiguration/shutdownSeconds`` and recorded, and rows never handed to a provider
/// are released for other workers.
public final class PushWorker: Sendable {
    public let configuration: WorkerConfiguration
    let logger: Logger
    let metrics: WorkerMetrics
    /// The token credentials' managers, by credential name (their signing counts are metrics).
    let tokenManagers: [String: ProviderTokenManager]
    /// Where the loops draw jitter and hold intervals from (the complete loop's ``Decider``, the
    /// claim loop's probes, the channel loop): each loop draws from a copy of its own.
    let random: any RandomNumberGenerator & Sendable
    let state = Mutex(State())
    /// Room in the window: answers were written back.
    let roomWake = Wakeup()
    /// New work may be due: a NOTIFY, a short retry, a stop request.
    let workWake = Wakeup()
    /// Answers arrived, or claiming ended.
    let completeWake = Wakeup()
    /// A NOTIFY (a new or deleted channel among others), or a stop request: the channel loop looks at once.
    let channelWake = Wakeup()
    /// A stop request: the listener's backoff and the pruner's rests end at once.
    let stopWake = Wakeup()
    /// Requests of a capped lane or credential to pace, or room in a sender: the pace loop looks.
    let paceWake = Wakeup()
    /// The listener's connection, to interrupt its wait on stop.
    let listener = Mutex<PGConnection?>(nil)
    /// Orders a lane's cancel (``laneCancelled(_:)``) against the hand-over of claimed rows to the
    /// senders (``dispatch(_:probe:)``, ``paceLoop()``): a request is either in a sender's queue
    /// or the pacer when the cancel withdraws the lane's, or handed over after the cancel's time
    /// was recorded, and then checked against it. Never taken with `state` or a sender's lock held.
    let handOverGate = Mutex(())

    /// - Parameters:
    ///   - configuration: see ``WorkerConfiguration``; checked by ``run()``.
    ///   - logger: worker events at `info`, per-notification details at `debug`.
    ///   - metrics: where to record metrics; defaults to recording nothing.
    ///   - random: where retries' jitter and holds' intervals are drawn from; defaults to
    ///     `SystemRandomNumberGenerator()`.
    public init(configuration: WorkerConfiguration, logger: Logger, metrics: WorkerMetrics = WorkerMetrics(),
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()) {
        self.configuration = configuration
        self.logger = logger
        self.metrics = metrics
        self.random = random
        var managers: [String: ProviderTokenManager] = [:]
        for (key, credential) in configuration.credentials {
            if case .apns(.token(let manager)) = credential { managers[key.name] = manager }
        }
        self.tokenManagers = managers
        state.withLock { $0.pacer = SendPacer(credentialCaps: configuration.credentialCaps) }
    }

    /// Counters so far.
    public var stats: Stats { state.withLock { $0.stats } }

    /// Rows held right now (claimed and not yet written back).
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// Asks ``run()`` to stop: no more claims; in-flight answers are recorded, the rest released.
    /// Safe from any thread, any number of times.
    public func requestStop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopRequested = true }
            if !s.stopRequested { s.stopRequestedAt = .now }
            return !s.stopRequested
        }
        guard first else { return }
        logger.info("worker stopping: no more claims; finishing what is in flight")
        workWake.signal()
        roomWake.signal()
        stopWake.signal()
        channelWake.signal()
        paceWake.signal()
        listener.withLock { $0 }?.interrupt()
    }

    var stopRequested: Bool { state.withLock { $0.stopRequested } }

    /// Whether the stop was requested more than `seconds` ago: the database retries at
    /// shutdown give up then, so that a partition cannot hold a stopping worker for long
    /// (the leases return what was not recorded).
    func stoppingFor(moreThan seconds: Double) -> Bool {
        guard let at = state.withLock({ $0.stopRequestedAt }) else { return false }
        return ContinuousClock.now - at > .milliseconds(Int(seconds * 1000))
    }

    /// Whether a stopping worker gave up on the database: its remaining writes, releases and
    /// unregistering are skipped at once instead of each waiting out a reconnect.
    var databaseGivenUp: Bool { state.withLock { $0.databaseGivenUp } }

    func giveUpDatabase() { state.withLock { $0.databaseGivenUp = true } }

    /// Claims, sends and records until ``requestStop()`` (or until the calling task is
    /// cancelled, which requests the stop).
    ///
    /// Every sender this worker started is shut down before `run()` returns or throws.
    ///
    /// - Throws: ``WorkerError`` for a bad configuration or a database without the pushq
    ///   schema, ``PushTransportError`` when the default sender cannot be set up (libcurl, the
    ///   CA file, the certificate: the message names the file). Once running, database and
    ///   network failures are retried with backoff, never thrown.
    public func run() async throws {
        try configuration.validate()
        try checkCredentials()
        // The pipeline runs in a task of its own, awaited here, so that cancelling the caller
        // requests a graceful stop instead of cutting every wait and sleep of the loops short.
        let pipeline = Task {
            do {
                try await runStarted()
            } catch {
                await shutDownSenders()
                throw error
            }
            await shutDownSenders()
        }
        try await withTaskCancellationHandler {
            try await pipeline.value
        } onCancel: {
            requestStop()
        }
    }

    /// ``run()`` once the configuration and credentials are checked.
    private func runStarted() async throws {
        // Fail fast on a CA file, certificate or libcurl that cannot be used, before waiting for
        // the database. APNs itself is not contacted: one that cannot be reached is an outage,
        // and the rows wait for it.
        let firstAPNs = Endpoint(credential: WorkerConfiguration.defaultCredentialName, environment: configuration.apns.environment)
        if configuration.serves(firstAPNs) { _ = try sender(for: firstAPNs) }
        for name in configuration.credentialNames(.fcm) { _ = try sender(for: .fcm(name)) }
        for name in configuration.credentialNames(.webpush) { _ = try sender(for: .webPush(name, origin: nil)) }
        guard let claimConnection = await connect(purpose: "claim") else { return }
        if let refusal = try await claimConnection.schemaRefusal(program: "this worker") {
            await claimConnection.close()
            throw WorkerError(.schema, refusal)
        }
        guard let completeConnection = await connect(purpose: "complete") else {
            await claimConnection.close()
            return
        }
        try await requireSessions(claimConnection, completeConnection)
        guard let listenConnection = await connect(purpose: "listen") else {
            await claimConnection.close()
            await completeConnection.close()
            return
        }
        listener.withLock { $0 = listenConnection }
        if stopRequested { listenConnection.interrupt() }
        state.withLock { $0.loopsStartedAt = .now; $0.databaseConnected = true }
        metrics.serves(configuration.endpoints)
        metrics.channelsServed(configuration.endpoints)
        await register(claimConnection)
        // The pauses and caps before the first claim (the listener keeps them up to date).
        await readLanes(claimConnection)

        logger.info("worker started", metadata: [
            "worker.id": "\(configuration.workerID)",
            "worker.version": "\(PushqVersion.current)",
            "worker.window": "\(configuration.sender.connections)x\(configuration.apns.streamsPerConnection)",
            "worker.credentials": "\(configuration.credentials.keys.sorted().map(\.description).joined(separator: ","))",
            "worker.environment": "\(configuration.apns.environment.rawValue)",
        ])
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                var listens = ListenLoop(worker: self, connection: listenConnection)
                await listens.run()
            }
            group.addTask {
                var completes = CompleteLoop(worker: self)
                await completes.run(completeConnection)
            }
            group.addTask {
                var prunes = PruneLoop(worker: self)
                await prunes.run()
            }
            group.addTask {
                var channels = ChannelLoop(worker: self)
                await channels.run()
            }
            group.addTask { await self.paceLoop() }
            var claims = ClaimLoop(worker: self)
            await claims.run(claimConnection)
            await drainSenders(claimConnection)
            state.withLock { $0.claimingDone = true; $0.claimingDoneAt = .now }
            completeWake.signal()
            listenConnection.interrupt()
            await group.waitForAll()
        }
        await unregister(claimConnection)
        await claimConnection.close()
        await completeConnection.close()
        await listenConnection.close()
        let s = stats
        logger.info("worker stopped", metadata: [
            "worker.claimed": "\(s.claimed)", "worker.sent": "\(s.sent)", "worker.retried": "\(s.retried)",
            "worker.failed": "\(s.failed)", "worker.expired": "\(s.expired)", "worker.released": "\(s.released)",
        ])
    }
}
