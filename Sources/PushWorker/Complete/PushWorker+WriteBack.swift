import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
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
                                                   messageName: answer.fcm?.messageName, webpushLocation: answer.webPush?.location))
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
                batch.throttles.append(TokenThrottle(deviceToken: h.deviceToken, environment: h.endpoint.environment, delaySeconds: d.retryDelay,
                                                     provider: h.endpoint.provider))
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
