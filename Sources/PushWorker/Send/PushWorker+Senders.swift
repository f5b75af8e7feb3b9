import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
    /// Shuts down every sender still running, at once (nothing is in flight any more, or the
    /// worker is failing): what they still queue is released by the leases.
    func shutDownSenders() async {
        let senders = state.withLock { Array($0.senders.values) }
        await withTaskGroup(of: Void.self) { group in
            for sender in senders { group.addTask { _ = await sender.shutdown(deadline: .zero) } }
        }
    }

    /// The sender for `endpoint`, created and started on first use, with the worker's neutral
    /// settings (``WorkerConfiguration/sender``) and its provider's entry: an APNs sender with
    /// the credential's key or certificate in the endpoint's environment, an FCM sender with
    /// the credential's access tokens (``fcmTokens(for:)``), or a Web Push sender with the
    /// credential's VAPID key, one per credential for every origin (``Endpoint/senderKey``).
    func sender(for endpoint: Endpoint) throws -> any Sender {
        let key = endpoint.senderKey
        if let existing = state.withLock({ $0.senders[key] }) { return existing }
        var senderLogger = logger
        senderLogger[metadataKey: LogKey.credential] = "\(key.credential)"
        senderLogger[metadataKey: LogKey.environment] = "\(key.channel)"
        let onResults: @Sendable ([PushResponse]) -> Void = { [weak self] batch in self?.received(batch) }
        let sender: any Sender
        switch key.provider {
        case .apns:
            guard let credential = configuration.apnsCredential(key.credential) else {
                throw WorkerError(.configuration, "no APNs credential named \(key.credential)")
            }
            var apns = configuration.apns
            apns.environment = key.environment
            sender = try PushSender(configuration: configuration.sender, apns: apns, credential: credential,
                                    logger: senderLogger, onResults: onResults)
        case .fcm:
            let tokens = try fcmTokens(for: key.credential)
            sender = try PushSender(configuration: configuration.sender, fcm: configuration.fcm, tokens: tokens,
                                    logger: senderLogger, onResults: onResults)
        case .webpush:
            guard let credential = configuration.webPushCredential(key.credential) else {
                throw WorkerError(.configuration, "no Web Push credential named \(key.credential)")
            }
            sender = try WebPushSender(configuration: configuration.sender, webPush: configuration.webPush, credential: credential,
                                       logger: senderLogger, onResults: onResults)
        }
        let winner = state.withLock { s -> (any Sender, Bool, LaneStops) in
            if let existing = s.senders[key] { return (existing, false, s.laneStops) }
            s.senders[key] = sender
            return (sender, true, s.laneStops)
        }
        if winner.1 {
            // The pauses as of its creation (``applyLanes(_:)`` tells the senders it sees; this one
            // may have come after): its queue is empty, nothing comes back.
            _ = sender.stopLanes(winner.2)
            try sender.start()
        }
        return winner.0
    }

    /// The access tokens of FCM credential `name`, one provider per credential for the worker's life.
    func fcmTokens(for name: String) throws -> FCMAccessTokenProvider {
        if let existing = state.withLock({ $0.fcmTokens[name] }) { return existing }
        guard let account = configuration.fcmAccount(name) else {
            throw WorkerError(.configuration, "no FCM credential named \(name)")
        }
        var tokenLogger = logger
        tokenLogger[metadataKey: LogKey.provider] = "\(Provider.fcm.rawValue)"
        tokenLogger[metadataKey: LogKey.credential] = "\(name)"
        let exchange = FCMTokenExchangeConfiguration(extraCAFile: configuration.sender.extraCAFile,
                                                     requestTimeout: configuration.sender.requestTimeout,
                                                     connectTimeout: configuration.sender.connectTimeout)
        let tokens = try FCMAccessTokenProvider(account: account, configuration: exchange, logger: tokenLogger)
        return state.withLock { s in
            if let existing = s.fcmTokens[name] { return existing }
            s.fcmTokens[name] = tokens
            return tokens
        }
    }

    /// Called by a sender thread with a batch of answers: hand them to the complete loop.
    private func received(_ batch: [PushResponse]) {
        let pacing = state.withLock { s in
            s.answers.append(contentsOf: batch)
            return s.pacer.count > 0
        }
        completeWake.signal()
        // Streams came free: paced requests may start.
        if pacing { paceWake.signal() }
    }

    /// Stops every sender: waits for answers in flight up to the shutdown deadline (the complete
    /// loop records them) and releases the rows never handed to a provider.
    func drainSenders(_ connection: PGConnection) async {
        let (senders, paced) = state.withLock { ($0.senders.values.map { $0 }, $0.pacer.removeAll()) }
        let deadline = Duration.milliseconds(Int(configuration.shutdownSeconds * 1000))
        var unsent: [PushRequest] = paced
        await withTaskGroup(of: [PushRequest].self) { group in
            for sender in senders { group.addTask { await sender.shutdown(deadline: deadline) } }
            for await batch in group { unsent += batch }
        }
        guard !unsent.isEmpty else { return }
        let claims = state.withLock { s in unsent.compactMap { s.held.claim(of: $0) } }
        while !databaseGivenUp {
            do {
                let n = try await connection.release(claims, workerID: configuration.workerID)
                state.withLock { s in
                    for c in claims { s.held.settled(c) }
                    s.stats.released += n
                }
                logger.info("released rows never sent", metadata: ["notifications": "\(n)"])
                return
            } catch {
                if stoppingFor(moreThan: configuration.shutdownRetrySeconds) {
                    giveUpDatabase()
                    break
                }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        logger.error("cannot release unsent rows; they return to the queue when their lease runs out",
                     metadata: ["notifications": "\(unsent.count)"])
        state.withLock { s in for c in claims { s.held.abandoned(c) } }
    }
}
