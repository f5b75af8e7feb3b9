import APNsTransport
import Foundation
import Logging
import PushCore
import PushStore

extension PushWorker {
    /// One batch of answers, decided and ready to write.
    struct CompletionBatch {
        var completions: [RowCompletion] = []
        var invalidations: [TokenInvalidation] = []
        var pauses: [CredentialPause] = []
        var resumed: [SenderKey] = []
        var soonRetries = false
        var sent = 0, retried = 0, failed = 0
    }

    /// Writes answers back in batches until claiming is over and nothing is held.
    func completeLoop(_ connection: PGConnection) async {
        var detectors: [SenderKey: BurstDetector] = [:]
        var pausedUntil: [SenderKey: ContinuousClock.Instant] = [:]
        while true {
            let (answers, local, held, finished) = state.withLock { s -> ([APNsResponse], [RowCompletion], [Held?], Bool) in
                let answers = s.answers
                let local = s.local
                s.answers.removeAll(keepingCapacity: true)
                s.local.removeAll()
                let held = answers.map { s.held[$0.tag] }
                return (answers, local, held, s.claimingDone && s.held.isEmpty)
            }
            if answers.isEmpty && local.isEmpty {
                if finished { return }
                if let since = state.withLock({ $0.claimingDoneAt }),
                   ContinuousClock.now - since > .milliseconds(Int((configuration.shutdownSeconds + 5) * 1000)) {
                    // Every request the senders took comes back answered, failed or unsent; this is a
                    // safety net, not a path: the rows' leases return them to the queue.
                    logger.error("stopping with rows whose answers never came; they return to the queue when their lease runs out",
                                 metadata: ["notifications": "\(heldCount)"])
                    return
                }
                await completeWake.wait(timeout: .seconds(1))
                continue
            }
            var batch = decide(answers, held: held, detectors: &detectors, pausedUntil: &pausedUntil)
            batch.completions += local
            batch.failed += local.count
            await write(batch, connection)
            state.withLock { s in
                if !batch.pauses.isEmpty { s.pauseWritten = true }
                for c in batch.completions { s.held[c.id] = nil }
                s.stats.sent += batch.sent
                s.stats.retried += batch.retried
                s.stats.failed += batch.failed
                s.stats.completionBatches += 1
            }
            roomWake.signal()
            if batch.soonRetries { workWake.signal() }
        }
    }

    /// Turns answers into row updates, invalidations and pauses (no I/O).
    func decide(_ answers: [APNsResponse], held: [Held?], detectors: inout [SenderKey: BurstDetector],
                pausedUntil: inout [SenderKey: ContinuousClock.Instant]) -> CompletionBatch {
        var batch = CompletionBatch()
        batch.completions.reserveCapacity(answers.count)
        /// The held row of each completion (answers whose row is no longer held have no completion).
        var rows: [Held] = []
        rows.reserveCapacity(answers.count)
        var suspects: [SenderKey: [Int]] = [:]
        var pauseReasons: [SenderKey: String] = [:]
        var resumed = Set<SenderKey>()
        let policy = configuration.retryPolicy
        var rng = SystemRandomNumberGenerator()
        for (i, answer) in answers.enumerated() {
            guard let h = held[i] else { continue }  // released or unknown: nothing to write
            let outcome = answer.outcome
            let reasonText = answer.reason?.rawValue ?? answer.transportFailure?.reasonString ?? answer.status.map { "HTTP\($0)" }
            var disposition = Disposition.decide(outcome: outcome, reason: reasonText, attempts: h.attempt,
                                                 maxAttempts: h.maxAttempts, policy: policy,
                                                 unitRandom: { Double.random(in: 0..<1, using: &rng) })
            if answer.status != nil {
                detectors[h.key, default: BurstDetector()].record(suspect: outcome.isBurstSuspect)
            }
            // Too few answers yet to tell a bad token from a wrong environment: try this row once
            // more, its attempt given back, before acting on the answer.
            if outcome.isBurstSuspect, !(detectors[h.key]?.canJudge ?? false), h.lastReason != disposition.reason {
                // 1-2 s: long enough for a wrong environment to show itself in the answers to the
                // rest of the window, short enough for one bad token to be recorded promptly.
                disposition = .deferredForBurst(reason: disposition.reason ?? "BadDeviceToken",
                                                delay: Double.random(in: 1..<2, using: &rng))
            }
            if outcome.isBurstSuspect && disposition.status == .failed {
                suspects[h.key, default: []].append(batch.completions.count)
            }
            if disposition.pausesCredential, pauseReasons[h.key] == nil { pauseReasons[h.key] = disposition.reason ?? "CredentialRejected" }
            if disposition.status == .sent { resumed.insert(h.key) }
            batch.completions.append(RowCompletion(
                id: answer.tag, attempt: h.attempt, disposition: disposition, httpStatus: answer.status,
                apnsUniqueID: answer.apnsUniqueID.flatMap { UUID(uuidString: $0) }))
            rows.append(h)
        }
        // A burst of BadDeviceToken / DeviceTokenNotForTopic: the credential's environment or
        // topic is wrong, not the tokens. Hold those rows and pause instead of invalidating.
        for (key, indices) in suspects where detectors[key]?.isBurst == true {
            let reason = batch.completions[indices[0]].disposition.reason ?? "BadDeviceToken"
            for i in indices { batch.completions[i].disposition = .heldForBurst(reason: reason) }
            pauseReasons[key] = reason + "Burst"
            detectors[key]?.reset()
        }
        let now = ContinuousClock.now
        for (key, reason) in pauseReasons {
            resumed.remove(key)
            if let until = pausedUntil[key], until > now { continue }
            pausedUntil[key] = now + .milliseconds(Int(configuration.pauseBaseSeconds * 1000))
            let message: String
            if reason.hasSuffix("Burst") {
                message = "most recent answers for credential \(key.credential) were \(reason.dropLast(5)): the tokens probably belong to the other environment or app (check PUSHQ_APNS_ENVIRONMENT, the rows' environment and topic); its notifications wait and no token was invalidated"
            } else {
                message = "APNs rejected credential \(key.credential) in \(key.environment.rawValue) with \(reason): check the key id, team id, key file or certificate; its notifications wait"
            }
            logger.error("credential paused: \(message)", metadata: [
                "apns.credential": "\(key.credential)", "apns.environment": "\(key.environment.rawValue)", "apns.reason": "\(reason)"])
            batch.pauses.append(CredentialPause(credential: key.credential, environment: key.environment, reason: reason, message: message))
        }
        // An accepted notification lifts a pause, whichever worker wrote it (a DELETE that finds
        // nothing costs one index probe per batch).
        for key in resumed {
            batch.resumed.append(key)
            pausedUntil[key] = nil
        }
        let poll = configuration.pollSeconds
        for (i, c) in batch.completions.enumerated() {
            switch c.disposition.status {
            case .sent: batch.sent += 1
            case .failed: batch.failed += 1
            case .retrying:
                batch.retried += 1
                if c.disposition.retryDelay < poll { batch.soonRetries = true }
            }
            if let inv = c.disposition.invalidation {
                batch.invalidations.append(TokenInvalidation(deviceToken: rows[i].deviceToken, environment: rows[i].key.environment,
                                                             reason: inv.reason, atMilliseconds: inv.atMilliseconds))
            }
        }
        return batch
    }

    /// Writes one batch, retrying until it lands: the write is fenced and idempotent, so
    /// running it again after a lost connection cannot record anything twice.
    func write(_ batch: CompletionBatch, _ connection: PGConnection) async {
        var backoff = 0.05
        var failures = 0
        while true {
            do {
                try await connection.complete(
                    batch.completions, invalidations: batch.invalidations, pauses: batch.pauses,
                    resumed: batch.resumed.map { ($0.credential, $0.environment) }, workerID: configuration.workerID,
                    pauseBaseSeconds: configuration.pauseBaseSeconds, pauseCapSeconds: configuration.pauseCapSeconds)
                if failures > 0 { logger.info("answers recorded after database errors", metadata: ["notifications": "\(batch.completions.count)"]) }
                return
            } catch {
                failures += 1
                if failures == 1 {
                    logger.error("recording answers failed; retrying with backoff", metadata: ["error": "\(error)"])
                }
                // Stopping and the database still away: the leases bring the rows back.
                if stopRequested && failures >= 20 {
                    logger.error("giving up recording answers at shutdown; the rows return to the queue when their lease runs out",
                                 metadata: ["notifications": "\(batch.completions.count)"])
                    return
                }
                try? await Task.sleep(for: .milliseconds(Int(backoff * 1000)))
                backoff = min(backoff * 2, 2)
            }
        }
    }
}
