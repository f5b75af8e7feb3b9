import Logging
import PushCore
import PushStore
import PushTransport

extension PushWorker {
    /// Hands claimed rows to their senders, in one batch per sender, each request with the
    /// claim's lease and send-by time. What each row's request is, is PushCore's
    /// (``PushRequest/init(row:defaultTopic:sendBy:)``);
    /// a row it refuses, or one this version cannot read, ends `failed` without being sent.
    ///
    /// A sender that cannot be built (its credential's files changed since start, say) holds its
    /// endpoint like a rejected credential, with the error as the hold's message, and its rows
    /// are given back with their attempts: the hold's probe tries to build it again.
    func dispatch(_ claim: Claim, probe: Bool = false) {
        let rows = claim.rows
        guard !rows.isEmpty else { return }
        metrics.endedByClaim(rows)
        var batches: [Endpoint: [PushRequest]] = [:]
        var held: [(Int64, Held)] = []
        var local: [RowCompletion] = []
        held.reserveCapacity(rows.count)
        var missingTopic = 0
        for row in rows where row.verdict == .send || row.verdict == .unreadable {
            // A Web Push row's endpoint carries its origin: one dead origin holds only its own rows.
            let key = row.endpoint
            // A quiet lane's row must start before its window opens (the server's instants, read
            // on this worker's monotonic clock); one that has not is given back (``giveBack(_:_:cancelled:)``).
            let quiet = row.quietWindow.map {
                (window: $0, clock: QuietClock(lease: row.lease, leaseSeconds: configuration.leaseSeconds, monotonic: claim.startedAt))
            }
            held.append((row.id, Held(attempt: row.attempts, lease: row.lease, maxAttempts: row.maxAttempts, endpoint: key, deviceToken: row.deviceToken,
                                      lastReason: row.lastReason, isProbe: probe, lane: row.lane, rank: row.rank, quiet: quiet)))
            let refusal: PushRequest.Refusal
            if row.verdict == .unreadable {
                logger.error("a notification's push_type or environment is unknown to this version of pushq; ended failed/InvalidRow",
                             metadata: ["notification.id": "\(row.id)"])
                refusal = PushRequest.Refusal(reason: "InvalidRow", message: "unknown push_type or environment")
            } else {
                let sendBy = quiet.map { QuietHours.startDeadline(sendBy: claim.sendBy, window: $0.window, clock: $0.clock) } ?? claim.sendBy
                switch request(for: row, sendBy: sendBy) {
                case .success(let request):
                    batches[key, default: []].append(request)
                    continue
                case .failure(let refused):
                    refusal = refused
                    if refused.reason == "MissingTopic" {
                        missingTopic += 1
                    } else {
                        logger.error("a notification cannot be sent as it is; ended failed/\(refused.reason)",
                                     metadata: ["notification.id": "\(row.id)", "problem": "\(refused.message)"])
                    }
                }
            }
            local.append(RowCompletion(id: row.id, attempt: row.attempts, lease: row.lease,
                                       disposition: Disposition(status: .failed, reason: refusal.reason), httpStatus: nil, apnsUniqueID: nil))
        }
        if missingTopic > 0 {
            logger.error("notifications without a topic: set PUSHQ_APNS_TOPIC, the credential's topic or the rows' topic column",
                         metadata: ["notifications": "\(missingTopic)"])
        }
        // Under the gate: a lane cancel handled meanwhile either finds these requests in a
        // sender's queue or the pacer, or is seen here (``laneCancelled(_:)``).
        handOverGate.withLock { _ in
            let (paced, cancelled) = state.withLock { s in
                s.stats.claimed += rows.count
                for (id, h) in held { s.held.claimed(id, h) }
                s.local.append(contentsOf: local)
                // Looked at only for a claim older than a cancel (a few lanes at most, once per claim).
                let cancelled = s.laneCancels.contains(where: { claim.startedAt < $0.value })
                    ? Self.takeCancelled(from: &batches, claimedAt: claim.startedAt, s.laneCancels) : []
                s.cancels += cancelled.compactMap { s.held.claim(of: $0) }
                // Requests of capped lanes and credentials start when their cap allows (``paceLoop()``).
                return (s.pacer.isActive && s.pacer.take(from: &batches), cancelled)
            }
            if !local.isEmpty || !cancelled.isEmpty { completeWake.signal() }
            if !cancelled.isEmpty {
                logger.info("lane cancelled: notifications of a claim that started before the cancel end cancelled, unsent",
                            metadata: ["notifications": "\(cancelled.count)", "lane": "\(Set(cancelled.map(\.lane)).sorted().joined(separator: ","))"])
            }
            if paced { paceWake.signal() }
            for (key, requests) in batches { submit(requests, to: key) }
        }
    }

    /// Removes from `batches` and returns the requests of the lanes cancelled (`cancels`: when
    /// this worker handled each lane's last cancel) after `claimedAt`, the start of their claim.
    ///
    /// A lane's cancel ends its waiting rows `SKIP LOCKED`: the rows a claim had locked when the
    /// cancel ran are skipped, and that claim returns them to this worker only afterwards. A claim
    /// that started after the worker handled the notice started after the cancel committed, so
    /// its rows of the lane were not waiting when the cancel ran; they go out.
    static func takeCancelled(from batches: inout [Endpoint: [PushRequest]], claimedAt: Int64,
                              _ cancels: [String: Int64]) -> [PushRequest] {
        var taken: [PushRequest] = []
        for (key, requests) in batches where requests.contains(where: { cancels[$0.lane].map { claimedAt < $0 } ?? false }) {
            var going: [PushRequest] = []
            for request in requests {
                if let at = cancels[request.lane], claimedAt < at { taken.append(request) } else { going.append(request) }
            }
            batches[key] = going.isEmpty ? nil : going
        }
        return taken
    }

    /// The request for `row` (``PushRequest/init(row:defaultTopic:sendBy:)``), with its credential's topic.
    private func request(for row: ClaimedNotification, sendBy: Int64?) -> Result<PushRequest, PushRequest.Refusal> {
        Result { () throws(PushRequest.Refusal) in
            try PushRequest(row: row, defaultTopic: configuration.defaultTopic(credential: row.credential), sendBy: sendBy)
        }
    }

    /// Submits `requests` to the sender of `key`. Only a sender that cannot be built fails
    /// (e.g. a credential file changed since start): the endpoint is held, the rows given back,
    /// and the hold's probe tries again.
    func submit(_ requests: [PushRequest], to key: Endpoint) {
        do {
            try sender(for: key).submit(requests)
        } catch {
            let hold = HoldRequest(endpoint: key, kind: .credential, reason: "SenderUnavailable",
                                   message: "cannot send with credential \(key.credential) (\(key.channel)): \(error); its notifications wait")
            state.withLock { s in
                s.releases += requests.compactMap { s.held.claim(of: $0) }
                // A sender shutting down refuses too (the pace loop's last turn): no hold then.
                if !s.stopRequested { s.senderHolds.append(hold) }
            }
            completeWake.signal()
        }
    }
}
