import PushCore
import PushStore
import PushTransport

extension PushWorker {
    /// Starts the requests of capped lanes and credentials as their caps allow (``SendPacer``),
    /// until a stop is requested (``drainSenders(_:)`` gives back what still waits then).
    ///
    /// Each turn hands the senders what the buckets and the senders' free streams allow, gives
    /// back the requests whose send-by time passed while they waited, and sleeps until the next
    /// token or until answers free streams (``paceWake``).
    func paceLoop() async {
        while !stopRequested {
            let now = monotonicNanoseconds()
            let senders = state.withLock { $0.senders }
            // Under the gate: a lane cancel takes what waits in the pacer, or what it handed over
            // from the senders' queues (``laneCancelled(_:)``).
            let (late, wait) = handOverGate.withLock { _ in
                let (go, late, wait) = state.withLock { s in
                    s.pacer.release(now: now) { senders[$0.senderKey]?.freeSlots ?? Int.max }
                }
                for (endpoint, requests) in go { submit(requests, to: endpoint) }
                return (late, wait)
            }
            if !late.isEmpty { handBack(late, cancelled: false) }
            // Held back by a token: until it comes (at least a millisecond); by room or nothing:
            // until answers come, a second at most (a send-by time may pass meanwhile).
            let nanoseconds = wait.map { max(1_000_000, min($0, 1_000_000_000)) } ?? 1_000_000_000
            await paceWake.wait(timeout: .nanoseconds(nanoseconds))
        }
    }
}
