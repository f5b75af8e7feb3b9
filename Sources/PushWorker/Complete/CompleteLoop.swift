import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

/// The complete loop: takes the senders' answers in batches, decides each row's fate with the
/// ``Decider`` (``PushWorker/decide(_:held:decider:)``), writes them back in one fenced
/// transaction per batch (``PushWorker/write(_:_:)``), gives back the rows the senders never
/// started, and deletes the rows of pushq.leases whose leases ended; until claiming is over and
/// nothing is held.
///
/// Its state is its own: the ``Decider`` (the endpoints' health, bursts, quotas, fresh tokens; a
/// copy of the worker's generator) and when it last sampled the senders' gauges.
struct CompleteLoop {
    let worker: PushWorker
    private var decider: Decider
    private var sampledAt = ContinuousClock.now - .seconds(1)

    init(worker: PushWorker) {
        self.worker = worker
        decider = Decider(policy: worker.configuration.retryPolicy, hold: worker.configuration.holdPolicy, random: worker.random)
    }

    var configuration: WorkerConfiguration { worker.configuration }
    var logger: Logger { worker.logger }
    var metrics: WorkerMetrics { worker.metrics }

    /// Runs until claiming is over and nothing is held.
    mutating func run(_ connection: PGConnection) async {
        while true {
            worker.tick(.complete)
            // The leases the last turn's write-back or give-back settled (before this turn may
            // wait for answers, or end the loop).
            await worker.deleteEndedLeases(connection)
            if metrics.isEnabled, ContinuousClock.now - sampledAt >= .seconds(1) {
                sampledAt = .now
                let (senders, fcmTokens) = worker.state.withLock { ($0.senders, $0.fcmTokens) }
                metrics.sample(senders, tokenManagers: worker.tokenManagers, fcmTokens: fcmTokens)
            }
            let (taken, local, held, localHeld, finished) = worker.state.withLock {
                s -> (PushWorker.Taken, [RowCompletion], [PushWorker.Held?], [PushWorker.Held?], Bool) in
                let taken = PushWorker.Taken(taking: &s)
                let local = s.local
                s.local.removeAll()
                // An answer is this claim's only if it carries the claim's lease: the row may have
                // been claimed again since (its lease ran out), and then the older answer is dropped.
                let held = taken.answers.map { s.held.answered($0.request) }
                let localHeld = metrics.isEnabled ? local.map { s.held[$0.id] } : []
                return (taken, local, held, localHeld, s.claimingDone && s.held.isEmpty)
            }
            if !taken.releases.isEmpty { await worker.giveBack(taken.releases, connection) }
            if !taken.cancels.isEmpty { await worker.giveBack(taken.cancels, connection, cancelled: true) }
            if taken.answers.isEmpty && local.isEmpty && taken.holds.isEmpty {
                if !taken.releases.isEmpty || !taken.cancels.isEmpty { continue }
                if await nothingToWrite(finished: finished) { return }
                continue
            }
            var batch = worker.decide(taken.answers, held: held, decider: &decider)
            add(local, held: localHeld, holds: decider.schedule(taken.holds), to: &batch)
            let started = ContinuousClock.now
            let recorded = await worker.write(batch, connection)
            if let recorded {
                batch.countEnded(recorded.ended)
                let took = (ContinuousClock.now - started).components
                metrics.wrote(batch.tally, nanoseconds: took.seconds * 1_000_000_000 + took.attoseconds / 1_000_000_000)
            }
            worker.report(recorded?.write)
            wrote(batch, lifted: recorded?.write.lifted ?? [], settled: recorded != nil, abandoned: Set(recorded?.abandoned ?? []))
        }
    }

    /// A turn with nothing to write: waits for answers, unless the loop is done.
    ///
    /// - Returns: true when the loop should end (claiming is over and nothing is held, or
    ///   answers never came long after the shutdown deadline).
    private func nothingToWrite(finished: Bool) async -> Bool {
        if finished { return true }
        if let since = worker.state.withLock({ $0.claimingDoneAt }),
           ContinuousClock.now - since > .milliseconds(Int((configuration.shutdownSeconds + 5) * 1000)) {
            // Every request the senders took comes back answered, failed or unsent; this is a
            // safety net, not a path: the rows' leases return them to the queue.
            logger.error("stopping with rows whose answers never came; they return to the queue when their lease runs out",
                         metadata: ["notifications": "\(worker.heldCount)"])
            return true
        }
        await worker.completeWake.wait(timeout: .seconds(1))
        return false
    }

    /// Adds to `batch` the rows the worker ended itself (`local`: refused by the request
    /// mapping, unreadable) and the endpoints whose senders could not be built (`holds`, scheduled).
    private func add(_ local: [RowCompletion], held: [PushWorker.Held?], holds: [(hold: HoldRequest, seconds: Double)],
                     to batch: inout PushWorker.CompletionBatch) {
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
    private func wrote(_ batch: PushWorker.CompletionBatch, lifted: [HeldEndpoint], settled: Bool, abandoned: Set<Int>) {
        worker.state.withLock { s in
            if !batch.holds.isEmpty || !lifted.isEmpty { s.holdsChanged = true }
            // Only the claim this answer belongs to: after a partition longer than the lease,
            // this worker may hold the same row again under a newer attempt.
            for (i, c) in batch.completions.enumerated() { s.held.forget(c.claim, settled: settled && !abandoned.contains(i)) }
            s.stats.sent += batch.sent
            s.stats.retried += batch.retried
            s.stats.failed += batch.failed
            s.stats.expired += batch.expired
            s.stats.completionBatches += 1
        }
        worker.roomWake.signal()
        if batch.soonRetries || !lifted.isEmpty { worker.workWake.signal() }
    }
}
