import Logging
import PushCore
import PushStore
import PushTransport
import PGClient

/// The worker's side of lanes (`pushq.lanes`): the pauses and caps it applies to its senders and
/// pacer, a lane cancelled from the dashboard, and requests never started handed back. Read at
/// start-up (``readLanes(_:)``) and by the listen loop (``ListenLoop``) on each lane notice; the
/// pace loop hands back what waited too long (``handBack(_:cancelled:)``).
extension PushWorker {
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
        let (senders, paced, changed) = state.withLock { s -> ([any Sender], [PushRequest], Bool) in
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
