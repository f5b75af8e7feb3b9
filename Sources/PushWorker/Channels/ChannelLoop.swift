import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

/// The channel loop, on a connection of its own: claims one channel with an operation due
/// at a time (``PGConnection/claimChannels(limit:workerID:leaseSeconds:credentials:defaultEnvironment:)``),
/// carries it out at Apple under its own lease, renewed before each request, and writes it
/// back; every ``WorkerConfiguration/heartbeatSeconds`` it reads the channel gauges and runs
/// the reconciliations that are due (``reconcile(_:)``). Woken by the NOTIFY of a new or deleted
/// channel, else every ``WorkerConfiguration/pollSeconds``. A worker without APNs credentials has
/// no channel loop.
///
/// Its state is its own: the clients of APNs' channel-management API it made, the holds or
/// outages in a row per endpoint (the exponent of their backoff), when it last read the gauges,
/// and the generator it draws jitter from (a copy of ``PushWorker/random``). Of the worker it
/// uses the configuration, the logger and metrics, the stop request and the wake-ups.
struct ChannelLoop {
    /// The clients of APNs' channel-management API, one per credential, environment and bundle
    /// id (each keeps its connection between requests).
    struct ClientKey: Hashable {
        var endpoint: Endpoint
        var bundleID: String
    }

    let worker: PushWorker
    private var clients: [ClientKey: APNsChannelClient] = [:]
    /// Holds or outages in a row per endpoint: the exponent of their backoff.
    private var holds: [Endpoint: Int] = [:]
    private var gaugesReadAt: ContinuousClock.Instant?
    /// Where retries' jitter and holds' intervals are drawn from.
    private var random: any RandomNumberGenerator & Sendable

    init(worker: PushWorker) {
        self.worker = worker
        random = worker.random
    }

    var configuration: WorkerConfiguration { worker.configuration }
    var logger: Logger { worker.logger }
    var metrics: WorkerMetrics { worker.metrics }
    var stopRequested: Bool { worker.stopRequested }

    /// Runs until a stop is requested.
    mutating func run() async {
        guard !configuration.credentialNames(.apns).isEmpty, let connection = await worker.connect(purpose: "channels") else { return }
        var backoff = LoopBackoff()
        while !stopRequested {
            var claimed = 0
            do {
                // The claim skips the channels of a held credential itself (its own snapshot).
                let channels = try await connection.claimChannels(
                    limit: Self.channelBatch, workerID: configuration.workerID, leaseSeconds: channelLeaseSeconds,
                    credentials: configuration.credentialNames(.apns), defaultEnvironment: configuration.apns.environment)
                claimed = channels.count
                for channel in channels where !stopRequested { try await carryOut(channel, connection) }
                if gaugesReadAt.map({ ContinuousClock.now - $0 >= .milliseconds(Int(configuration.heartbeatSeconds * 1000)) }) ?? true {
                    gaugesReadAt = .now
                    try await reconcile(connection)
                    let status = try await connection.channelsStatus()
                    metrics.channels(status.counts, reconciliations: status.reconciliations)
                }
                _ = backoff.succeeded()
            } catch {
                let step = backoff.failed()
                if step.log { logger.warning("the channel loop's statement failed; trying again", metadata: ["error": "\(error)"]) }
                await worker.stopWake.wait(timeout: .milliseconds(max(step.restMilliseconds, 200)))
                continue
            }
            if claimed < Self.channelBatch {
                await worker.channelWake.wait(timeout: .milliseconds(Int(configuration.pollSeconds * 1000)))
            }
        }
        await connection.close()
    }

    /// Channels claimed by one statement of the channel loop: one, so that each operation has a
    /// lease of its own (ten under one lease outlived it behind a slow management host, and
    /// another worker created them again).
    static let channelBatch = 1

    /// The lease of a claimed channel, seconds: ``WorkerConfiguration/leaseSeconds``, and at
    /// least one request's deadline (connect and request timeouts) and the lease margin, so
    /// that a request never outlives it. Renewed before each further request of the operation.
    var channelLeaseSeconds: Double {
        max(configuration.leaseSeconds,
            configuration.sender.requestTimeout + configuration.sender.connectTimeout + WorkerConfiguration.leaseMarginSeconds)
    }

    /// Carries out one claimed channel's operation and writes it back.
    private mutating func carryOut(_ claimed: ClaimedChannel, _ connection: PGConnection) async throws {
        var channel = claimed
        var metadata: Logger.Metadata = ["channel.name": "\(channel.name)", "channel.operation": "\(channel.operation)",
                                         LogKey.credential: "\(channel.credential)", LogKey.environment: "\(channel.environment.rawValue)"]
        let completion: ChannelCompletion?
        if channel.operation == .delete, channel.apnsChannelID == nil, channel.unansweredCreate == nil {
            // Never created at Apple: nothing to delete there.
            completion = ChannelCompletion(id: channel.id, lease: channel.lease, result: .deleted, httpStatus: nil, reason: nil)
        } else if let problem = channel.apnsChannelID.flatMap({ ChannelOperation.delete(channelID: $0).problem }) {
            // Only a hand-written row can hold it (a check on the column refuses it otherwise): never sent.
            completion = ChannelCompletion(id: channel.id, lease: channel.lease, result: .failed, httpStatus: nil,
                                           reason: APNsReason.badChannelId.rawValue)
            metadata["error"] = "\(problem)"
            logger.error("a channel's apns_channel_id cannot be sent as a header value: the channel ends failed, nothing sent", metadata: metadata)
        } else if let bundleID = channel.topic ?? configuration.defaultTopic(credential: channel.credential) {
            completion = try await operate(&channel, bundleID: bundleID, connection, &metadata)
        } else {
            completion = ChannelCompletion(id: channel.id, lease: channel.lease, result: .failed, httpStatus: nil, reason: "MissingTopic")
            logger.error("a channel has no bundle id: set its topic, the credential's topic or PUSHQ_APNS_TOPIC", metadata: metadata)
        }
        guard let completion else {
            logger.warning("a channel's lease ran out before its next request: nothing more sent, the next claim takes it over", metadata: metadata)
            return
        }
        let status = try await connection.completeChannel(completion, workerID: configuration.workerID)
        metadata["channel.status"] = "\(status ?? "lease lost")"
        switch completion.result {
        case .created, .deleted: logger.info("channel \(channel.operation == .create ? "created" : "deleted") at Apple", metadata: metadata)
        case .failed: logger.error("channel operation failed for good", metadata: metadata)
        case .retry: logger.info("channel operation to be tried again", metadata: metadata)
        }
    }

    /// Carries out a channel's operation at Apple: first, when a create of the row went
    /// unanswered, finds what it made (``settleUnansweredCreate(_:bundleID:_:_:_:)``); then the
    /// create (recorded on the row before it is sent) or the delete. Nil when the row's lease was
    /// lost on the way: nothing more is sent.
    private mutating func operate(_ channel: inout ClaimedChannel, bundleID: String, _ connection: PGConnection,
                                  _ metadata: inout Logger.Metadata) async throws -> ChannelCompletion? {
        let endpoint = channel.endpoint
        let client: APNsChannelClient
        do {
            client = try channelClient(endpoint, bundleID: bundleID)
        } catch {
            // An operator's problem (a CA file, the URL, a credential this worker lacks): held back, not failed.
            metadata["error"] = "\(error)"
            var generator = random  // a stored existential is not opened in place: drawn from a copy, kept after
            let after = configuration.holdPolicy.interval(.credential, probes: holds[endpoint] ?? 0, using: &generator)
            random = generator
            holds[endpoint, default: 0] += 1
            return ChannelCompletion(id: channel.id, lease: channel.lease, result: .retry(afterSeconds: after, refund: true),
                                     httpStatus: nil, reason: "ChannelClientUnavailable")
        }
        if channel.unansweredCreate != nil {
            switch try await settleUnansweredCreate(&channel, bundleID: bundleID, client, connection, &metadata) {
            case .leaseLost: return nil
            case .answered(let completion): return completion
            case .adopted(let id):
                return ChannelCompletion(id: channel.id, lease: channel.lease, result: .created(apnsChannelID: id), httpStatus: nil, reason: nil)
            case .cleared:
                if channel.apnsChannelID == nil && channel.operation == .delete {
                    return ChannelCompletion(id: channel.id, lease: channel.lease, result: .deleted, httpStatus: nil, reason: nil)
                }
            }
        }
        let operation: ChannelOperation
        let requestID = UUID().uuidString.lowercased()
        if channel.operation == .create {
            operation = .create(ChannelStoragePolicy(rawValue: channel.messageStoragePolicy) ?? .mostRecentMessageStored)
            // Recorded (and committed) before it is sent: a lost answer is looked for, not created again.
            guard let lease = try await connection.recordCreateAttempt(channel, requestID: requestID, workerID: configuration.workerID,
                                                                       leaseSeconds: channelLeaseSeconds) else { return nil }
            channel.lease = lease
        } else {
            operation = .delete(channelID: channel.apnsChannelID ?? "")
        }
        let response = await client.send(operation, requestID: requestID)
        return completion(for: response, of: channel, &metadata)
    }

    /// What came of looking for the channel an unanswered create may have made.
    enum Settlement {
        /// The row's lease was lost: stop, send nothing more.
        case leaseLost
        /// A request failed: write this back (retry, hold or fail as its answer says).
        case answered(ChannelCompletion)
        /// The one channel the create made: the row's.
        case adopted(String)
        /// Nothing of the create is left at Apple (none was made, or what was made is deleted).
        case cleared
    }

    /// After a create of `channel` went unanswered (a timeout or reset, or a worker that died
    /// before writing the answer back): lists the app's channels at Apple (`all-channels`) and
    /// looks at those no row of `pushq.channels` has and that the last reconciliation before the
    /// create did not already find (someone else's): the candidates, made after the create.
    ///
    /// Apple's list carries ids only (no request id, no creation time), so ownership is decided
    /// by elimination. Creates of one app are claimed one at a time fleet-wide, so no other create
    /// is in flight. One candidate, and this the only row of the app with an unanswered create:
    /// it is this row's channel, adopted. No candidate: the create never took effect. Otherwise
    /// (several candidates, or several rows each with an unanswered create, which cannot be told
    /// apart), the candidates are deleted at Apple and each row creates anew. For a row being
    /// deleted, every candidate is deleted.
    private mutating func settleUnansweredCreate(_ channel: inout ClaimedChannel, bundleID: String, _ client: APNsChannelClient,
                                                 _ connection: PGConnection, _ metadata: inout Logger.Metadata) async throws -> Settlement {
        guard let lease = try await connection.renewChannelLease(channel, workerID: configuration.workerID,
                                                                  leaseSeconds: channelLeaseSeconds) else { return .leaseLost }
        channel.lease = lease
        let response = await client.send(.listAll, requestID: UUID().uuidString.lowercased())
        metrics.channelRequest(operation: ChannelOperation.listAll.name, result: Self.resultLabel(response.outcome))
        guard response.outcome == .done, let listed = response.answer?.channels else {
            return .answered(completion(for: response, of: channel, &metadata, counted: true))
        }
        let facts = try await connection.unansweredCreateFacts(channel, bundleID: bundleID)
        let candidates = listed.filter { !facts.known.contains($0) && !facts.unknownBefore.contains($0) && ChannelOperation.delete(channelID: $0).problem == nil }
        metadata["channels.listed"] = "\(listed.count)"
        metadata["channels.candidates"] = "\(candidates.count)"
        metadata["channels.unanswered_rows"] = "\(facts.unansweredRows)"
        if candidates.isEmpty {
            logger.info("an unanswered create made no channel at Apple", metadata: metadata)
            return .cleared
        }
        if channel.operation == .create, candidates.count == 1, facts.unansweredRows == 1 {
            metadata["apns.channel_id"] = "\(candidates[0])"
            logger.info("an unanswered create made a channel at Apple: adopted", metadata: metadata)
            return .adopted(candidates[0])
        }
        logger.warning("channels at Apple that an unanswered create may have made cannot be told apart: deleting them, the rows create anew",
                       metadata: metadata)
        for id in candidates where !stopRequested {
            guard let lease = try await connection.renewChannelLease(channel, workerID: configuration.workerID,
                                                                      leaseSeconds: channelLeaseSeconds) else { return .leaseLost }
            channel.lease = lease
            let deletion = ChannelOperation.delete(channelID: id)
            let answer = await client.send(deletion, requestID: UUID().uuidString.lowercased())
            metrics.channelRequest(operation: deletion.name, result: Self.resultLabel(answer.outcome))
            guard answer.outcome == .done || answer.outcome == .gone else {
                return .answered(completion(for: answer, of: channel, &metadata, counted: true))
            }
        }
        return stopRequested ? .answered(ChannelCompletion(id: channel.id, lease: channel.lease, result: .retry(afterSeconds: 0, refund: true),
                                                           httpStatus: nil, reason: "Shutdown")) : .cleared
    }

    /// What to write back after `response` to the row's operation (``ChannelDecision``).
    private mutating func completion(for response: ChannelResponse, of channel: ClaimedChannel,
                                     _ metadata: inout Logger.Metadata, counted: Bool = false) -> ChannelCompletion {
        let endpoint = channel.endpoint
        let outcome = response.outcome
        var generator = random  // drawn from a copy, kept after (as above)
        let decision = ChannelDecision.decide(outcome, operation: channel.operation, createdID: response.createdChannelID,
                                              attempts: channel.attempts, maxAttempts: channel.maxAttempts,
                                              holds: holds[endpoint] ?? 0, retry: configuration.retryPolicy,
                                              hold: configuration.holdPolicy, using: &generator)
        random = generator
        holds[endpoint] = decision.isHeldBack ? (holds[endpoint] ?? 0) + 1 : 0
        if !counted { metrics.channelRequest(operation: response.operation.name, result: Self.resultLabel(outcome)) }
        metadata["http.status"] = "\(response.answer?.status ?? 0)"
        metadata[LogKey.reason] = "\(outcome.reasonText ?? "")"
        if let id = response.answer?.requestID { metadata["apns.request_id"] = "\(id)" }
        return ChannelCompletion(id: channel.id, lease: channel.lease, result: decision, httpStatus: response.answer?.status,
                                 reason: outcome.reasonText, requestID: response.answer?.requestID)
    }

    /// The `result` label of `pushq_channel_requests_total`.
    static func resultLabel(_ outcome: ChannelOutcome) -> String {
        switch outcome {
        case .done: return "done"
        case .gone: return "gone"
        case .fail: return "failed"
        case .retry, .retryNow: return "retry"
        case .hold: return "held"
        }
    }

    /// The client for `endpoint`'s credential and environment and `bundleID`, made on first use.
    mutating func channelClient(_ endpoint: Endpoint, bundleID: String) throws -> APNsChannelClient {
        let key = ClientKey(endpoint: endpoint, bundleID: bundleID)
        if let client = clients[key] { return client }
        guard let credential = configuration.apnsCredential(endpoint.credential) else {
            throw WorkerError(.configuration, "no APNs credential named \(endpoint.credential)")
        }
        let settings = APNsChannelConfiguration(environment: endpoint.environment, baseURL: configuration.channelsBaseURL,
                                                extraCAFile: configuration.sender.extraCAFile,
                                                requestTimeout: configuration.sender.requestTimeout,
                                                connectTimeout: configuration.sender.connectTimeout)
        var clientLogger = logger
        clientLogger[metadataKey: LogKey.credential] = "\(endpoint.credential)"
        clientLogger[metadataKey: LogKey.environment] = "\(endpoint.channel)"
        let client = try APNsChannelClient(configuration: settings, credential: credential, bundleID: bundleID, logger: clientLogger)
        clients[key] = client
        return client
    }
}
