import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
    /// Writes answers back in batches until claiming is over and nothing is held.
    func completeLoop(_ connection: PGConnection) async {
        var decider = Decider(policy: configuration.retryPolicy, hold: configuration.holdPolicy, random: random)
        var sampledAt = ContinuousClock.now - .seconds(1)
        while true {
            tick(.complete)
            // The leases the last turn's write-back or give-back settled (before this turn may
            // wait for answers, or end the loop).
            await deleteEndedLeases(connection)
            if metrics.isEnabled, ContinuousClock.now - sampledAt >= .seconds(1) {
                sampledAt = .now
                let (senders, fcmTokens) = state.withLock { ($0.senders, $0.fcmTokens) }
                metrics.sample(senders, tokenManagers: tokenManagers, fcmTokens: fcmTokens)
            }
            let (taken, local, held, localHeld, finished) = state.withLock { s -> (Taken, [RowCompletion], [Held?], [Held?], Bool) in
                let taken = Taken(taking: &s)
                let local = s.local
                s.local.removeAll()
                // An answer is this claim's only if it carries the claim's lease: the row may have
                // been claimed again since (its lease ran out), and then the older answer is dropped.
                let held = taken.answers.map { s.held.answered($0.request) }
                let localHeld = metrics.isEnabled ? local.map { s.held[$0.id] } : []
                return (taken, local, held, localHeld, s.claimingDone && s.held.isEmpty)
            }
            if !taken.releases.isEmpty { await giveBack(taken.releases, connection) }
            if !taken.cancels.isEmpty { await giveBack(taken.cancels, connection, cancelled: true) }
            if taken.answers.isEmpty && local.isEmpty && taken.holds.isEmpty {
                if !taken.releases.isEmpty || !taken.cancels.isEmpty { continue }
                if await nothingToWrite(finished: finished) { return }
                continue
            }
            var batch = decide(taken.answers, held: held, decider: &decider)
            add(local, held: localHeld, holds: decider.schedule(taken.holds), to: &batch)
            let started = ContinuousClock.now
            let recorded = await write(batch, connection)
            if let recorded {
                batch.countEnded(recorded.ended)
                let took = (ContinuousClock.now - started).components
                metrics.wrote(batch.tally, nanoseconds: took.seconds * 1_000_000_000 + took.attoseconds / 1_000_000_000)
            }
            report(recorded?.write)
            wrote(batch, lifted: recorded?.write.lifted ?? [], settled: recorded != nil, abandoned: Set(recorded?.abandoned ?? []))
        }
    }

    /// Deletes this worker's rows of pushq.leases whose rows were all written back or given
    /// back (``HeldRows/takeEndedLeases()``), so that the upkeep reads only the leases of rows whose
    /// worker died or lost the database. Best effort: a lease row left behind costs the upkeep
    /// a read once it ends, nothing more.
    func deleteEndedLeases(_ connection: PGConnection) async {
        let ended = state.withLock { $0.held.takeEndedLeases() }
        guard !ended.isEmpty, !databaseGivenUp else { return }
        do { try await connection.deleteLeases(workerID: configuration.workerID, leases: ended) } catch {
            logger.debug("cannot delete ended leases; the upkeep reads them once they end", metadata: ["error": "\(error)"])
        }
    }

    /// A turn with nothing to write: waits for answers, unless the loop is done.
    ///
    /// - Returns: true when the loop should end (claiming is over and nothing is held, or
    ///   answers never came long after the shutdown deadline).
    private func nothingToWrite(finished: Bool) async -> Bool {
        if finished { return true }
        if let since = state.withLock({ $0.claimingDoneAt }),
           ContinuousClock.now - since > .milliseconds(Int((configuration.shutdownSeconds + 5) * 1000)) {
            // Every request the senders took comes back answered, failed or unsent; this is a
            // safety net, not a path: the rows' leases return them to the queue.
            logger.error("stopping with rows whose answers never came; they return to the queue when their lease runs out",
                         metadata: ["notifications": "\(heldCount)"])
            return true
        }
        await completeWake.wait(timeout: .seconds(1))
        return false
    }

    /// Adds to `batch` the rows the worker ended itself (`local`: refused by the request
    /// mapping, unreadable) and the endpoints whose senders could not be built (`holds`, scheduled).
    private func add(_ local: [RowCompletion], held: [Held?], holds: [(hold: HoldRequest, seconds: Double)], to batch: inout CompletionBatch) {
        batch.holds += holds
        batch.completions += local
        batch.failed += local.count
        guard metrics.isEnabled else { return }
        for (c, h) in zip(local, held) {
            guard let h else {
                batch.counted.append(nil)
                continue
            }
            let entry = batch.tally.count(c.disposition, outcome: .fail(.unknown(c.disposition.reason ?? "")), status: nil,
                                          endpoint: h.endpoint, lane: h.lane, answered: false)
            batch.counted.append(entry)
        }
    }

    /// After a batch was written (`settled`) or given up: forgets its rows, counts it, and wakes
    /// the claim loop (room in the window; a hold lifted or retries due soon). Rows given up, and
    /// `abandoned` ones (indexes: neither written nor ended), keep their claim's lease row.
    private func wrote(_ batch: CompletionBatch, lifted: [HeldEndpoint], settled: Bool, abandoned: Set<Int>) {
        state.withLock { s in
            if !batch.holds.isEmpty || !lifted.isEmpty { s.holdsChanged = true }
            // Only the claim this answer belongs to: after a partition longer than the lease,
            // this worker may hold the same row again under a newer attempt.
            for (i, c) in batch.completions.enumerated() { s.drop(c.claim, settled: settled && !abandoned.contains(i)) }
            s.stats.sent += batch.sent
            s.stats.retried += batch.retried
            s.stats.failed += batch.failed
            s.stats.expired += batch.expired
            s.stats.completionBatches += 1
        }
        roomWake.signal()
        if batch.soonRetries || !lifted.isEmpty { workWake.signal() }
    }

    /// Turns answers into row updates, invalidations, throttles and holds (no I/O): the
    /// decisions are the ``Decider``'s; this maps rows in and writes out.
    func decide(_ answers: [PushResponse], held: [Held?], decider: inout Decider) -> CompletionBatch {
        var batch = CompletionBatch()
        var inputs: [Answer] = []
        var rows: [(answer: PushResponse, held: Held)] = []
        inputs.reserveCapacity(answers.count)
        rows.reserveCapacity(answers.count)
        for (i, answer) in answers.enumerated() {
            guard let h = held[i] else { continue }  // released or unknown: nothing to write
            inputs.append(Answer(row: answer.tag, endpoint: h.endpoint, attempts: h.attempt, maxAttempts: h.maxAttempts,
                                 lastReason: h.lastReason, isProbe: h.isProbe, outcome: answer.outcome, reasonText: answer.reasonText,
                                 isHTTPAnswer: answer.status != nil, token: answer.token, deviceToken: h.deviceToken))
            rows.append((answer, h))
        }
        let decisions = decider.decide(inputs)
        let poll = configuration.pollSeconds
        let counting = metrics.isEnabled
        batch.completions.reserveCapacity(rows.count)
        for (i, (answer, h)) in rows.enumerated() {
            let d = decisions.dispositions[i]
            if counting {
                let entry = batch.tally.count(d, outcome: inputs[i].outcome, status: answer.status, endpoint: h.endpoint,
                                              lane: h.lane, answered: !answer.expiredBeforeSending)
                batch.counted.append(entry)
                metrics.answered(h.endpoint.provider, nanoseconds: answer.durationNanoseconds)
            }
            batch.completions.append(RowCompletion(id: answer.tag, attempt: h.attempt, lease: h.lease, disposition: d, httpStatus: answer.status,
                                                   apnsUniqueID: answer.apns?.uniqueID.flatMap { UUID(uuidString: $0) },
                                                   messageName: answer.fcm?.messageName))
            switch d.status {
            case .sent: batch.sent += 1
            case .failed: batch.failed += 1
            case .expired: batch.expired += 1
            case .retrying:
                batch.retried += 1
                if d.retryDelay < poll { batch.soonRetries = true }
            }
            if let inv = d.invalidation {
                batch.invalidations.append(TokenInvalidation(deviceToken: h.deviceToken, environment: h.endpoint.environment,
                                                             reason: inv.reason, atMilliseconds: inv.atMilliseconds,
                                                             provider: h.endpoint.provider))
                batch.invalidationRows.append(answer.tag)
            }
            if d.throttlesToken {
                batch.throttles.append(TokenThrottle(deviceToken: h.deviceToken, environment: h.endpoint.environment, delaySeconds: d.retryDelay))
                batch.throttleRows.append(answer.tag)
            }
        }
        batch.holds = decider.schedule(decisions.holds)
        // An accepted notification lifts a hold, whichever worker wrote it (a DELETE that finds
        // nothing costs one index probe per batch).
        batch.resumed = decisions.resumed
        return batch
    }

    /// Logs the holds this worker wrote and lifted: each once, whichever of the workers saw it.
    func report(_ written: CompletionWrite?) {
        guard let written else { return }
        func metadata(_ endpoint: Endpoint, _ kind: HoldKind, _ reason: String) -> Logger.Metadata {
            [LogKey.provider: "\(endpoint.provider.rawValue)", LogKey.credential: "\(endpoint.credential)",
             LogKey.environment: "\(endpoint.channel)", LogKey.reason: "\(reason)", "hold.kind": "\(kind.rawValue)"]
        }
        for h in written.heldNow {
            switch h.kind {
            case .outage: logger.warning("endpoint down: \(h.message)", metadata: metadata(h.endpoint, h.kind, h.reason))
            case .credential, .burst: logger.error("credential paused: \(h.message)", metadata: metadata(h.endpoint, h.kind, h.reason))
            }
        }
        for h in written.lifted {
            switch h.kind {
            case .outage:
                logger.info("endpoint recovered: \(h.endpoint.serviceName) answers again; its notifications go out", metadata: metadata(h.endpoint, h.kind, h.reason))
            case .credential, .burst:
                logger.info("credential resumed: \(h.endpoint.serviceName) accepted a notification", metadata: metadata(h.endpoint, h.kind, h.reason))
            }
        }
    }

    /// Writes one batch, retrying until it lands: the write is fenced and idempotent, so
    /// running it again after a lost connection cannot record anything twice. A write that
    /// fails on data (SQLSTATE class 22, 23 or P0) is split until the row that makes it fail is
    /// alone, and that row is ended (``bisect(_:after:_:)``). Once a stop is requested it gives
    /// up after ``WorkerConfiguration/shutdownRetrySeconds`` (the leases bring the rows back).
    ///
    /// - Returns: what was written, the rows ended `failed`/`WriteBackError` and the rows that
    ///   could be neither written nor ended (indexes into the batch's completions), nil when it
    ///   gave up.
    func write(_ batch: CompletionBatch, _ connection: PGConnection) async -> (write: CompletionWrite, ended: [Int], abandoned: [Int])? {
        var failures = 0
        let workerID = configuration.workerID
        switch await settle(&failures, connection, {
            try await connection.complete(batch.completions, invalidations: batch.invalidations, throttles: batch.throttles,
                                          holds: batch.holds, resumed: batch.resumed, workerID: workerID)
        }) {
        case .success(let written):
            if failures > 0 { logger.info("answers recorded after database errors", metadata: ["notifications": "\(batch.completions.count)"]) }
            return (written, [], [])
        case .failure(let error):
            return await bisect(batch, after: error, connection)
        case nil:
            logger.error("giving up recording answers at shutdown; the rows return to the queue when their lease runs out",
                         metadata: ["notifications": "\(batch.completions.count)"])
            return nil
        }
    }

    /// Runs a write-back statement until it works or fails on data, retrying every other
    /// failure (a lost connection, a deadline, 40001, 40P01, 57P01...) with backoff; the first
    /// failure of a run (counted in `failures`) is logged. A read-only session (25006) is
    /// dropped first, so the retry reconnects; a refusal only an operator can mend (42501,
    /// 42P01...) is logged with its fix and fails `/healthz` until a retry works
    /// (``databaseFailed(_:loop:purpose:_:)``).
    ///
    /// - Returns: its value, the error it failed with on data (SQLSTATE class 22, 23 or P0), or nil
    ///   when the worker gave up on the database at shutdown.
    func settle<T: Sendable>(_ failures: inout Int, _ connection: PGConnection,
                             _ body: () async throws -> T) async -> Result<T, any Error>? {
        let purpose = "recording answers"
        var backoff = 0.05
        while !databaseGivenUp {
            do {
                let value = try await body()
                tick(.complete)
                databaseAccepted(.complete, purpose: purpose)
                return .success(value)
            } catch {
                if Self.failure(of: error) == .deterministic { return .failure(error) }
                failures += 1
                let kind = await databaseFailed(error, loop: .complete, purpose: purpose, connection)
                if failures == 1, kind == .transient {
                    logger.error("recording answers failed; retrying with backoff", metadata: ["error": "\(error)"])
                }
                if stoppingFor(moreThan: configuration.shutdownRetrySeconds) {
                    giveUpDatabase()
                    break
                }
                try? await Task.sleep(for: .milliseconds(Int(backoff * 1000)))
                backoff = min(backoff * 2, 2)
                tick(.complete)
            }
        }
        return nil
    }
}
