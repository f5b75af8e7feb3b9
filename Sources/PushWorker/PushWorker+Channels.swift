import Foundation
import Logging
import PushCore
import PushStore
import PushTransport

extension PushWorker {
    /// The clients of APNs' channel-management API the channel loop made, one per credential,
    /// environment and bundle id (each keeps its connection between requests).
    struct ChannelClientKey: Hashable {
        var endpoint: Endpoint
        var bundleID: String
    }

    /// The channel loop's own state: its clients, and the holds or outages in a row per endpoint
    /// (the exponent of their backoff).
    struct ChannelLoopState {
        var clients: [ChannelClientKey: APNsChannelClient] = [:]
        var holds: [Endpoint: Int] = [:]
        var gaugesReadAt: ContinuousClock.Instant?
    }

    /// The channel loop, on a connection of its own: claims the channels with an operation due
    /// (``PGConnection/claimChannels(limit:workerID:leaseSeconds:credentials:defaultEnvironment:)``),
    /// carries each out at Apple and writes it back; every ``WorkerConfiguration/heartbeatSeconds``
    /// it reads the channel gauges and runs the reconciliations that are due. Woken by the
    /// NOTIFY of a new or deleted channel, else every ``WorkerConfiguration/pollSeconds``.
    /// A worker without APNs credentials has no channel loop.
    func channelLoop() async {
        guard !configuration.credentials.isEmpty, let connection = await connect(purpose: "channels") else { return }
        var loop = ChannelLoopState()
        var backoff = LoopBackoff()
        while !stopRequested {
            var claimed = 0
            do {
                // The claim skips the channels of a held credential itself (its own snapshot).
                let channels = try await connection.claimChannels(
                    limit: Self.channelBatch, workerID: configuration.workerID, leaseSeconds: configuration.leaseSeconds,
                    credentials: configuration.credentials.keys.sorted(), defaultEnvironment: configuration.sender.environment)
                claimed = channels.count
                for channel in channels where !stopRequested { try await carryOut(channel, connection, &loop) }
                if loop.gaugesReadAt.map({ ContinuousClock.now - $0 >= .milliseconds(Int(configuration.heartbeatSeconds * 1000)) }) ?? true {
                    loop.gaugesReadAt = .now
                    try await reconcile(connection, &loop)
                    let status = try await connection.channelsStatus()
                    metrics.channels(status.counts, reconciliations: status.reconciliations)
                }
                _ = backoff.succeeded()
            } catch {
                let step = backoff.failed()
                if step.log { logger.warning("the channel loop's statement failed; trying again", metadata: ["error": "\(error)"]) }
                await stopWake.wait(timeout: .milliseconds(max(step.restMilliseconds, 200)))
                continue
            }
            if claimed < Self.channelBatch {
                await channelWake.wait(timeout: .milliseconds(Int(configuration.pollSeconds * 1000)))
            }
        }
        await connection.close()
    }

    /// Channels claimed by one statement of the channel loop.
    static let channelBatch = 10

    /// Carries out one claimed channel's operation and writes it back.
    private func carryOut(_ channel: ClaimedChannel, _ connection: PGConnection, _ loop: inout ChannelLoopState) async throws {
        var metadata: Logger.Metadata = ["channel.name": "\(channel.name)", "channel.operation": "\(channel.operation)",
                                         LogKey.credential: "\(channel.credential)", LogKey.environment: "\(channel.environment.rawValue)"]
        let completion: ChannelCompletion
        if channel.operation == .delete, channel.apnsChannelID == nil {
            // Never created at Apple: nothing to delete there.
            completion = ChannelCompletion(id: channel.id, lease: channel.lease, result: .deleted, httpStatus: nil, reason: nil)
        } else if let bundleID = channel.topic ?? configuration.defaultTopic(credential: channel.credential) {
            completion = await request(channel, bundleID: bundleID, &loop, &metadata)
        } else {
            completion = ChannelCompletion(id: channel.id, lease: channel.lease, result: .failed, httpStatus: nil, reason: "MissingTopic")
            logger.error("a channel has no bundle id: set its topic, the credential's topic or PUSHQ_APNS_TOPIC", metadata: metadata)
        }
        let status = try await connection.completeChannel(completion, workerID: configuration.workerID)
        metadata["channel.status"] = "\(status ?? "lease lost")"
        switch completion.result {
        case .created, .deleted: logger.info("channel \(channel.operation == .create ? "created" : "deleted") at Apple", metadata: metadata)
        case .failed: logger.error("channel operation failed for good", metadata: metadata)
        case .retry: logger.info("channel operation to be tried again", metadata: metadata)
        }
    }

    /// Sends one create or delete to Apple and decides what to write back (``ChannelDecision``).
    private func request(_ channel: ClaimedChannel, bundleID: String, _ loop: inout ChannelLoopState,
                         _ metadata: inout Logger.Metadata) async -> ChannelCompletion {
        let endpoint = channel.endpoint
        let client: APNsChannelClient
        do {
            client = try channelClient(endpoint, bundleID: bundleID, &loop)
        } catch {
            // An operator's problem (a CA file, the URL, a credential this worker lacks): held back, not failed.
            metadata["error"] = "\(error)"
            let after = configuration.holdPolicy.interval(.credential, probes: loop.holds[endpoint] ?? 0, unitRandom: { Double.random(in: 0..<1) })
            loop.holds[endpoint, default: 0] += 1
            return ChannelCompletion(id: channel.id, lease: channel.lease, result: .retry(afterSeconds: after, refund: true),
                                     httpStatus: nil, reason: "ChannelClientUnavailable")
        }
        let operation: ChannelOperation = channel.operation == .create
            ? .create(ChannelStoragePolicy(rawValue: channel.messageStoragePolicy) ?? .mostRecentMessageStored)
            : .delete(channelID: channel.apnsChannelID ?? "")
        let response = await client.send(operation, requestID: UUID().uuidString.lowercased())
        let outcome = response.outcome
        let decision = ChannelDecision.decide(outcome, operation: channel.operation, createdID: response.createdChannelID,
                                              attempts: channel.attempts, maxAttempts: channel.maxAttempts,
                                              holds: loop.holds[endpoint] ?? 0, retry: configuration.retryPolicy,
                                              hold: configuration.holdPolicy, unitRandom: { Double.random(in: 0..<1) })
        loop.holds[endpoint] = decision.isHeldBack ? (loop.holds[endpoint] ?? 0) + 1 : 0
        metrics.channelRequest(operation: operation.name, result: Self.resultLabel(outcome))
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
    func channelClient(_ endpoint: Endpoint, bundleID: String, _ loop: inout ChannelLoopState) throws -> APNsChannelClient {
        let key = ChannelClientKey(endpoint: endpoint, bundleID: bundleID)
        if let client = loop.clients[key] { return client }
        guard let credential = configuration.credentials[endpoint.credential] else {
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
        loop.clients[key] = client
        return client
    }
}
