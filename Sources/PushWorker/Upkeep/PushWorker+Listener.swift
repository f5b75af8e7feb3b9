import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

extension PushWorker {
    /// Waits for the insert trigger's NOTIFY and wakes the claim loop; and for the lanes'
    /// (``LaneStops/laneChannel``: a change to `pushq.lanes`, or a lane cancelled from the
    /// dashboard), on which it reads the lanes again and stops the requests of paused lanes.
    ///
    /// The lanes are read again right after each LISTEN, and after each failure (the connection
    /// may have been lost with the notices sent meanwhile), so that no change is missed.
    func listenLoop(_ connection: PGConnection) async {
        var listening = false
        var lanesKnown = true
        var backoff = 0.1
        while !stopRequested {
            do {
                if !listening {
                    try await connection.listen("pushq_enqueued")
                    try await connection.listen(LaneStops.laneChannel)
                    listening = true
                    lanesKnown = false
                }
                if !lanesKnown {
                    try await refreshLanes(connection)
                    lanesKnown = true
                }
                let received = try await connection.waitForNotifications(timeout: .seconds(30))
                backoff = 0.1
                let lanes = received.filter { $0.channel == LaneStops.laneChannel }
                if lanes.count < received.count {
                    // A claim loop waiting for room looks whether the new rows outrank what it holds.
                    state.withLock { $0.enqueued = true }
                    workWake.signal()
                    roomWake.signal()
                    channelWake.signal()
                }
                if !lanes.isEmpty {
                    // Cancels first: they need no statement.
                    let prefix = LaneStops.cancelPayloadPrefix
                    for lane in Set(lanes.compactMap { $0.payload.hasPrefix(prefix) ? String($0.payload.dropFirst(prefix.count)) : nil }) {
                        laneCancelled(lane)
                    }
                    lanesKnown = false
                    try await refreshLanes(connection)
                    lanesKnown = true
                }
            } catch {
                logger.debug("listen failed; retrying", metadata: ["error": "\(error)"])
                lanesKnown = false
                // A stop request ends the backoff at once.
                await stopWake.wait(timeout: .milliseconds(Int(backoff * 1000)))
                backoff = min(backoff * 2, 5)
            }
        }
    }

    /// Reads `pushq.lanes` on the listener's connection and applies it (``applyLanes(_:)``), then
    /// says LISTEN again (idempotent): the session's last statement stays a LISTEN, which is how
    /// `pg_stat_activity` shows a worker's listener.
    private func refreshLanes(_ connection: PGConnection) async throws {
        applyLanes(try await connection.laneSettings())
        try await connection.listen(LaneStops.laneChannel)
    }

    /// Reads `pushq.lanes` and applies it (``applyLanes(_:)``); a failure is logged, and the
    /// listener reads them again once it listens.
    func readLanes(_ connection: PGConnection) async {
        do {
            applyLanes(try await connection.laneSettings())
        } catch {
            logger.warning("cannot read pushq.lanes; pauses and caps apply to claims only until the listener reads them",
                           metadata: ["error": "\(error)"])
        }
    }

    /// Takes the lanes as read from `pushq.lanes`: every sender stops the requests of the
    /// paused lanes (those waiting in its queue come back and are given back to the queue in one
    /// fenced write-back, attempts untouched; any other is handed back as it leaves the queue),
    /// and the pacer takes the caps. A lane resumed starts again.
    func applyLanes(_ settings: [LaneSetting]) {
        let stops = LaneStops(lanes: settings.map { ($0.name, $0.paused) })
        let now = monotonicNanoseconds()
        let (senders, paced, changed) = state.withLock { s -> ([PushSender], [PushRequest], Bool) in
            let changed = s.laneStops != stops
            s.laneStops = stops
            s.pacer.setLanes(settings, now: now)
            let paced = stops.isEmpty ? [] : s.pacer.remove { stops.stops($0.lane) }
            return (Array(s.senders.values), paced, changed)
        }
        var stopped = paced
        if changed || !stops.isEmpty {
            for sender in senders { stopped += sender.stopLanes(stops) }
        }
        if !stopped.isEmpty {
            logger.info("lane paused: notifications claimed and not started are given back to the queue, attempts untouched",
                        metadata: ["notifications": "\(stopped.count)"])
        }
        handBack(stopped, cancelled: false)
        paceWake.signal()
    }

    /// A lane was cancelled from the dashboard: the requests of `lane` this worker claimed and
    /// has not started end `cancelled` (requests on the wire, and those a connection already
    /// took from its sender's queue to start, end with the provider's answer).
    ///
    /// Also those of a claim in flight now: the cancel skipped the rows that claim had locked,
    /// so the time of this notice is kept, and the rows of `lane` of a claim that started earlier
    /// are ended `cancelled` when it returns (``dispatch(_:probe:)``).
    func laneCancelled(_ lane: String) {
        let withdrawn = handOverGate.withLock { _ in
            let now = monotonicNanoseconds()
            let (senders, paced) = state.withLock { s in
                s.laneCancels[lane] = now
                return (Array(s.senders.values), s.pacer.remove { $0.lane == lane })
            }
            var withdrawn = paced
            for sender in senders { withdrawn += sender.withdraw(lane: lane) }
            return withdrawn
        }
        // Logged also when nothing was held: that the worker heard the cancel.
        logger.info("lane cancelled: notifications claimed and not started end cancelled",
                    metadata: ["notifications": "\(withdrawn.count)", "lane": "\(lane)"])
        handBack(withdrawn, cancelled: true)
    }

    /// Hands requests never started to the complete loop: to give back (or to end `cancelled`),
    /// those of the claims this worker still holds, in one fenced write-back.
    func handBack(_ requests: [PushRequest], cancelled: Bool) {
        guard !requests.isEmpty else { return }
        state.withLock { s in
            let claims = requests.compactMap { s.held.claim(of: $0) }
            if cancelled { s.cancels += claims } else { s.releases += claims }
        }
        completeWake.signal()
    }
}
