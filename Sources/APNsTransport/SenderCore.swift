import Logging
import PushCore
import Synchronization

/// What an ``APNsSender`` and its connection threads share.
///
/// All mutable state is in ``state`` (a `Mutex`); the rest is immutable after `init`.
/// Work crosses threads in batches: `submit` appends a batch under the lock, each
/// connection takes up to its free window in one ``SenderState/exchange(want:)``
/// per loop iteration.
final class SenderCore: Sendable {
    let configuration: APNsSenderConfiguration
    let credential: APNsCredential
    let template: EasyTemplate
    let logger: Logger
    let onResults: @Sendable ([APNsResponse]) -> Void
    let state = Mutex(SenderState())
    /// Each connection's current multi handle, for `curl_multi_wakeup` from `submit`.
    let wakeTargets: [WakeTarget]

    init(configuration: APNsSenderConfiguration, credential: APNsCredential, template: EasyTemplate,
         logger: Logger, onResults: @escaping @Sendable ([APNsResponse]) -> Void) {
        self.configuration = configuration
        self.credential = credential
        self.template = template
        self.logger = logger
        self.onResults = onResults
        self.wakeTargets = (0..<configuration.connections).map { _ in WakeTarget() }
    }

    func wakeAll() {
        for target in wakeTargets {
            target.current()?.wakeup()
        }
    }

    func threadExited() {
        state.withLock { s in
            s.runningThreads -= 1
            if s.runningThreads == 0 {
                s.phase = .stopped
                s.waiter?.resume()
                s.waiter = nil
            }
        }
    }
}

/// The sender's shared, lock-protected state.
struct SenderState {
    enum Phase: Equatable {
        case created, running
        /// Shutting down: start nothing new; cancel what is in flight at `deadline` (monotonic ns).
        case stopping(deadline: Int64)
        case stopped
    }

    var phase: Phase = .created
    /// Requests waiting for a stream; `pending[head...]` are live.
    var pending: [APNsRequest] = []
    var head = 0
    /// Requests handed to connections and not yet answered.
    var inFlight = 0
    var runningThreads = 0
    var waiter: CheckedContinuation<Void, Never>?
    var stats = APNsSender.Stats()

    var pendingCount: Int { pending.count - head }

    /// Takes up to `want` requests; returns the phase too.
    mutating func exchange(want: Int) -> (Phase, [APNsRequest]) {
        guard case .running = phase, want > 0, head < pending.count else { return (phase, []) }
        let n = min(want, pending.count - head)
        let taken = Array(pending[head..<head + n])
        head += n
        inFlight += n
        stats.peakInFlight = max(stats.peakInFlight, inFlight)
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 4096, head * 2 >= pending.count {
            pending.removeFirst(head)
            head = 0
        }
        return (phase, taken)
    }

    /// Removes and returns every request not yet handed to a connection.
    mutating func takeUnsent() -> [APNsRequest] {
        let unsent = Array(pending[head...])
        pending = []
        head = 0
        return unsent
    }
}

/// A connection's current multi handle, readable from `submit` to wake the connection's thread.
final class WakeTarget: Sendable {
    private let multi = Mutex<CurlMulti?>(nil)
    func current() -> CurlMulti? { multi.withLock { $0 } }
    func set(_ new: CurlMulti?) { multi.withLock { $0 = new } }
}
