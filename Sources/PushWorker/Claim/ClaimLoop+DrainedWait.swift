import PushCore
import PushStore
import PGClient

extension ClaimLoop {
    /// How long the drained loop waits for a NOTIFY (``PushCore/DrainedWait``): until shortly
    /// after the earliest entry of pushq.due that comes due after now (nothing NOTIFYs when a
    /// scheduled row, a retry or an entry held for quiet hours or a cap becomes due), the poll
    /// at the latest. One index-backed statement (``PGConnection/secondsUntilNextDue()``), run
    /// only when the queue is drained; if it fails, the loop waits for the poll as before (the
    /// next claim reports a database that fails).
    ///
    /// - Parameters:
    ///   - poll: the worker's poll.
    ///   - took: the rows this turn's claims took.
    mutating func drainedTimeout(_ connection: PGConnection, poll: Duration, took: Int) async -> Duration {
        let seconds: Double?
        do {
            seconds = try await connection.secondsUntilNextDue()
        } catch {
            logger.debug("could not read the next due entry; waiting for the poll", metadata: ["error": "\(error)"])
            seconds = nil
        }
        return drainedWait.next(poll: poll, took: took, secondsUntilNext: seconds)
    }
}
