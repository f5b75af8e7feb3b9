import Logging
import PushCore
import PushStore
import PGClient

/// The listen loop, on a connection of its own: waits for the insert trigger's `NOTIFY` and
/// wakes the claim and channel loops, so that an idle worker claims at once; and for the lanes'
/// (``LaneStops/laneChannel``: a change to `pushq.lanes`, or a lane cancelled from the
/// dashboard), on which it ends the cancelled lanes' requests not yet started
/// (``PushWorker/laneCancelled(_:)``) and reads the lanes again (``PushWorker/applyLanes(_:)``).
/// What each wait's notices call for is ``ListenNotices``.
///
/// The lanes are read again right after each LISTEN, and after each failure (the connection
/// may have been lost with the notices sent meanwhile), so that no change is missed. A failure
/// is retried with backoff, 0.1 s doubling to 5 s; a stop request ends the backoff, and
/// interrupts a wait (``PushWorker/requestStop()`` interrupts the connection).
///
/// Its state is its own: whether it listens, whether the lanes it applied are current, and its
/// backoff. Of the worker it uses the logger, the stop request, the wake-ups and the lanes'
/// handling (``PushWorker/applyLanes(_:)``, ``PushWorker/laneCancelled(_:)``).
struct ListenLoop {
    let worker: PushWorker
    let connection: PGConnection
    private var listening = false
    /// The lanes applied are as `pushq.lanes` says (no notice can have been missed since).
    private var lanesKnown = true
    private var backoff = 0.1

    init(worker: PushWorker, connection: PGConnection) {
        self.worker = worker
        self.connection = connection
    }

    /// Runs until a stop is requested.
    mutating func run() async {
        while !worker.stopRequested {
            do {
                if !listening {
                    try await connection.listen(ListenNotices.enqueuedChannel)
                    try await connection.listen(LaneStops.laneChannel)
                    listening = true
                    lanesKnown = false
                }
                if !lanesKnown {
                    try await refreshLanes()
                    lanesKnown = true
                }
                let received = try await connection.waitForNotifications(timeout: .seconds(30))
                backoff = 0.1
                try await carryOut(ListenNotices(received))
            } catch {
                worker.logger.debug("listen failed; retrying", metadata: ["error": "\(error)"])
                lanesKnown = false
                // A stop request ends the backoff at once.
                await worker.stopWake.wait(timeout: .milliseconds(Int(backoff * 1000)))
                backoff = min(backoff * 2, 5)
            }
        }
    }

    /// Does what one wait's notices call for, in ``ListenNotices``' order.
    private mutating func carryOut(_ notices: ListenNotices) async throws {
        if notices.enqueued {
            // A claim loop waiting for room looks whether the new rows outrank what it holds.
            worker.state.withLock { $0.enqueued = true }
            worker.workWake.signal()
            worker.roomWake.signal()
            worker.channelWake.signal()
        }
        for lane in notices.cancelledLanes { worker.laneCancelled(lane) }
        if notices.lanesChanged {
            lanesKnown = false
            try await refreshLanes()
            lanesKnown = true
        }
    }

    /// Reads `pushq.lanes` on the listener's connection and applies it (``PushWorker/applyLanes(_:)``),
    /// then says LISTEN again (idempotent): the session's last statement stays a LISTEN, which is
    /// how `pg_stat_activity` shows a worker's listener.
    private func refreshLanes() async throws {
        worker.applyLanes(try await connection.laneSettings())
        try await connection.listen(LaneStops.laneChannel)
    }
}
