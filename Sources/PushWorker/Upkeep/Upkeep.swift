import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

/// The worker's upkeep, run by the claim loop between claims, on its connection (``ClaimLoop``
/// calls ``runIfDue(_:)`` each turn): every ``WorkerConfiguration/heartbeatSeconds`` a full turn —
/// the heartbeat in `pushq.workers` (registering again if the row is gone), the database's clock,
/// deleting ended token throttles, old tallies and frequency caps' old reservations, and the queue gauges; and in every turn,
/// full or not:
/// - expiring waiting rows that no worker claims (held endpoints, credentials no live worker
///   has), at most ``WorkerConfiguration/expiryChunksPerTurn`` chunks of
///   ``WorkerConfiguration/expiryChunkRows``, ticking the claim loop between chunks;
/// - giving the rows of leases that have ended back to the claim
///   (``PGConnection/recoverLapsedLeases(limit:)``, ``leasesPerTurn`` leases a turn);
/// - deleting the entries of pushq.due at the front of each lane whose row no longer waits
///   (``PGConnection/sweepDue(limit:)``: left by a worker of the previous release).
///
/// While a turn leaves work (``workLeft``), the next claim turn runs another, so that a mass
/// expiry goes on a few chunks at a time between claims instead of holding them up.
///
/// Its state is its own (``Schedule``): when the next full turn is due and whether work is left.
/// Of the worker it uses the configuration, the logger and metrics, the stop request, the health
/// record (ticks, refusals) and the registration (``PushWorker/register(_:)``).
struct Upkeep {
    let worker: PushWorker
    private var schedule: Schedule

    init(worker: PushWorker) {
        self.worker = worker
        schedule = Schedule(every: .milliseconds(Int(worker.configuration.heartbeatSeconds * 1000)), start: .now)
    }

    var configuration: WorkerConfiguration { worker.configuration }
    var logger: Logger { worker.logger }
    var metrics: WorkerMetrics { worker.metrics }

    /// The last turn left work for the next (``Schedule/workLeft``): the claim loop does not
    /// wait for a NOTIFY or the poll meanwhile.
    var workLeft: Bool { schedule.workLeft }

    /// A turn, if one is due (``Schedule``): a full one every
    /// ``WorkerConfiguration/heartbeatSeconds``, and one between claims while the last left work.
    mutating func runIfDue(_ connection: PGConnection) async {
        guard let due = schedule.due(at: .now) else { return }
        let left = await turn(connection, full: due == .full)
        schedule.ran(due, workLeft: left, at: .now)
    }

    /// When the upkeep's turns are due, on a clock the caller reads (tested without one).
    struct Schedule: Equatable {
        /// What kind of turn is due.
        enum Turn: Equatable {
            /// The heartbeat is due: everything, the heartbeat, the clock, the deletions and the gauges included.
            case full
            /// The last turn left work: expiry, leases and the sweep only.
            case between
        }

        let every: Duration
        /// When the next full turn is due.
        private(set) var fullAt: ContinuousClock.Instant
        /// The last turn left work for the next: its last expiry chunk was full, it read as many
        /// leases as a turn reads, or the sweep found entries to delete (there may be more).
        private(set) var workLeft = false

        /// A schedule whose first full turn is due at `start`.
        init(every: Duration, start: ContinuousClock.Instant) {
            self.every = every
            fullAt = start
        }

        /// The turn due at `now`, if any.
        func due(at now: ContinuousClock.Instant) -> Turn? {
            if now >= fullAt { return .full }
            return workLeft ? .between : nil
        }

        /// A turn ended at `now`; `workLeft`, whether it left work. The next full turn is due
        /// ``every`` after a full one ended; a turn between does not move it.
        mutating func ran(_ turn: Turn, workLeft: Bool, at now: ContinuousClock.Instant) {
            self.workLeft = workLeft
            if turn == .full { fullAt = now + every }
        }
    }

    /// One turn (see ``Upkeep``); with `full`, the heartbeat, the clock, the deletions and the gauges too.
    ///
    /// - Returns: whether work is left for the next turn.
    private func turn(_ connection: PGConnection, full: Bool) async -> Bool {
        worker.tick(.upkeep)
        let chunk = max(1, configuration.expiryChunkRows)
        var more = false
        do {
            if full, try await !connection.heartbeat(id: configuration.workerID) { await worker.register(connection) }
            if full { try await measureDatabaseClock(connection) }
            var expired = 0
            for _ in 0..<max(1, configuration.expiryChunksPerTurn) {
                let groups = try await connection.expireWaiting(limit: chunk)
                worker.tick(.claim)
                worker.tick(.upkeep)
                metrics.expired(groups, defaultEnvironment: configuration.apns.environment)
                let n = groups.reduce(0) { $0 + $1.rows }
                expired += n
                more = n >= chunk
                if !more || worker.stopRequested { break }
            }
            if expired > 0 {
                worker.state.withLock { $0.stats.expired += expired }
                logger.info("expired notifications no worker could send in time", metadata: [
                    "notifications": "\(expired)", "expiry.more": "\(more)"])
            }
            let lapsed = try await connection.recoverLapsedLeases(limit: Self.leasesPerTurn)
            worker.tick(.upkeep)
            if lapsed.leases >= Self.leasesPerTurn { more = true }
            if lapsed.rows > 0 {
                logger.info("leases ended with their notifications unanswered; they are claimed again", metadata: [
                    "notifications": "\(lapsed.rows)"])
            }
            try await connection.releaseRecoveredLeases(limit: Self.leasesPerTurn)
            worker.tick(.upkeep)
            let swept = try await connection.sweepDue(limit: chunk)
            worker.tick(.upkeep)
            if swept > 0 {
                more = true
                logger.debug("deleted entries of pushq.due whose rows no longer wait", metadata: ["due.entries": "\(swept)"])
            }
            if full {
                try await connection.deleteEndedThrottles()
                if try await connection.deleteOldOutcomes(limit: chunk) == chunk { more = true }
                // Frequency caps' reservations no window reaches any more.
                if try await connection.pruneRecipientSends(limit: chunk) == chunk { more = true }
                try await worker.readQueueGauges(connection)
            }
        } catch {
            await worker.databaseFailed(error, loop: .upkeep, purpose: Self.purpose, connection)
            logger.debug("upkeep failed; tried again later", metadata: ["error": "\(error)"])
            return false
        }
        worker.databaseAccepted(.upkeep, purpose: Self.purpose)
        return more
    }

    /// What the upkeep's statements are for, in the logs and `/healthz` when PostgreSQL refuses them.
    static let purpose = "the upkeep (heartbeat, expiry)"

    /// Rows of pushq.leases whose end has passed that one upkeep turn reads (each holds the ids
    /// of one claim, up to its batch). A fleet at full rate ends about as many leases a second as
    /// it claims batches; what one turn leaves, the next, between claims, reads.
    static let leasesPerTurn = 20

    /// Reads the database's clock and records its offset from the host's in the senders'
    /// ``DatabaseClockOffset``, so that send-time expiry follows the database's clock (which
    /// wrote `expires_at`) even when the host's clock is wrong; logs a warning when the offset
    /// moves to 2 s or more.
    private func measureDatabaseClock(_ connection: PGConnection) async throws {
        let before = Self.hostMilliseconds()
        let database = try await connection.clockMilliseconds()
        let offset = SendTimeExpiry.offset(hostBeforeMilliseconds: before, databaseMilliseconds: database,
                                           hostAfterMilliseconds: Self.hostMilliseconds())
        let clock = configuration.sender.databaseClock
        let previous = clock.seconds
        clock.set(offset)
        if offset != previous, abs(offset) >= 2 {
            logger.warning("this host's clock differs from the database's; send-time expiry follows the database's clock (check NTP)",
                           metadata: ["clock.database_ahead_seconds": "\(offset)"])
        }
    }

    /// This host's wall clock, in milliseconds since the epoch.
    static func hostMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
