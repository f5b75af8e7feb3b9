import Foundation
import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
    /// The worker's periodic upkeep, run by the claim loop between claims: with `full`, the
    /// heartbeat, deleting ended token throttles and the queue gauges; always, expiring waiting
    /// rows that no worker claims (held endpoints, credentials no live worker has), at most
    /// ``WorkerConfiguration/expiryChunksPerTurn`` chunks of
    /// ``WorkerConfiguration/expiryChunkRows`` a turn, ticking the claim loop between chunks,
    /// giving the rows of leases that have ended back to the claim
    /// (``PGConnection/recoverLapsedLeases(limit:)``, ``leasesPerUpkeep`` leases a turn), and
    /// deleting the entries of pushq.due at the front of each lane whose row no longer waits
    /// (``PGConnection/sweepDue(limit:)``: left by a worker of the previous release).
    ///
    /// - Returns: whether work is left for the next turn: the last expiry chunk was full, the
    ///   leases read were as many as a turn reads, or the sweep found entries to delete (there
    ///   may be more: it looks again next turn).
    func upkeep(_ connection: PGConnection, full: Bool) async -> Bool {
        tick(.upkeep)
        let chunk = max(1, configuration.expiryChunkRows)
        var more = false
        do {
            if full, try await !connection.heartbeat(id: configuration.workerID) { await register(connection) }
            if full { try await measureDatabaseClock(connection) }
            var expired = 0
            for _ in 0..<max(1, configuration.expiryChunksPerTurn) {
                let groups = try await connection.expireWaiting(limit: chunk)
                tick(.claim)
                tick(.upkeep)
                metrics.expired(groups, defaultEnvironment: configuration.apns.environment)
                let n = groups.reduce(0) { $0 + $1.rows }
                expired += n
                more = n >= chunk
                if !more || stopRequested { break }
            }
            if expired > 0 {
                state.withLock { $0.stats.expired += expired }
                logger.info("expired notifications no worker could send in time", metadata: [
                    "notifications": "\(expired)", "expiry.more": "\(more)"])
            }
            let lapsed = try await connection.recoverLapsedLeases(limit: Self.leasesPerUpkeep)
            tick(.upkeep)
            if lapsed.leases >= Self.leasesPerUpkeep { more = true }
            if lapsed.rows > 0 {
                logger.info("leases ended with their notifications unanswered; they are claimed again", metadata: [
                    "notifications": "\(lapsed.rows)"])
            }
            try await connection.releaseRecoveredLeases(limit: Self.leasesPerUpkeep)
            tick(.upkeep)
            let swept = try await connection.sweepDue(limit: chunk)
            tick(.upkeep)
            if swept > 0 {
                more = true
                logger.debug("deleted entries of pushq.due whose rows no longer wait", metadata: ["due.entries": "\(swept)"])
            }
            if full {
                try await connection.deleteEndedThrottles()
                if try await connection.deleteOldOutcomes(limit: chunk) == chunk { more = true }
                try await readQueueGauges(connection)
            }
        } catch {
            await databaseFailed(error, loop: .upkeep, purpose: "the upkeep (heartbeat, expiry)", connection)
            logger.debug("upkeep failed; tried again later", metadata: ["error": "\(error)"])
            return false
        }
        databaseAccepted(.upkeep, purpose: "the upkeep (heartbeat, expiry)")
        return more
    }

    /// Rows of pushq.leases whose end has passed that one upkeep turn reads (each holds the ids
    /// of one claim, up to its batch). A fleet at full rate ends about as many leases a second as
    /// it claims batches; what one turn leaves, the next, between claims, reads.
    static let leasesPerUpkeep = 20

    /// Reads the database's clock and records its offset from the host's in the senders'
    /// ``DatabaseClockOffset``, so that send-time expiry follows the database's clock (which
    /// wrote `expires_at`) even when the host's clock is wrong; logs a warning when the offset
    /// moves to 2 s or more.
    func measureDatabaseClock(_ connection: PGConnection) async throws {
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

    static let hostName: String = {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
