import CCurl
import Logging
import PushCore
import Synchronization

/// What a ``PushSender`` and its connection threads share, whatever the provider.
///
/// All mutable state is in ``state`` (a `Mutex`); the rest is immutable after `init`.
/// Work crosses threads in batches: `submit` appends a batch under the lock, each
/// connection takes up to its free window in one ``SenderState/exchange(want:)``
/// per loop iteration.
final class SenderCore: Sendable {
    let configuration: PushSenderConfiguration
    /// Streams in flight per connection (``PushProvider/streamsPerConnection``).
    let streamsPerConnection: Int
    /// The provider the sender posts to (for names and logs; the connections hold its ``PushProvider``).
    let provider: Provider
    /// Deadlines and TLS of every stream.
    let transfer: CurlTransferSettings
    let logger: Logger
    let onResults: @Sendable ([PushResponse]) -> Void
    let state = Mutex(SenderState())
    /// Each connection's current multi handle, for `curl_multi_wakeup` from `submit`.
    let wakeTargets: [WakeTarget]

    init(configuration: PushSenderConfiguration, streamsPerConnection: Int, provider: Provider, transfer: CurlTransferSettings, logger: Logger,
         onResults: @escaping @Sendable ([PushResponse]) -> Void) {
        self.configuration = configuration
        self.streamsPerConnection = streamsPerConnection
        self.provider = provider
        self.transfer = transfer
        self.logger = logger
        self.onResults = onResults
        self.wakeTargets = (0..<configuration.connections).map { _ in WakeTarget() }
    }

    func wakeAll() {
        for (index, target) in wakeTargets.enumerated() {
            let rc = target.wake()
            if rc != CURLM_OK {
                // The connection then wakes at its next poll timeout (at most a second) instead.
                logger.error("curl_multi_wakeup failed", metadata: [LogKey.connection: "\(index)", LogKey.curlError: "\(curlMessage(rc))"])
            }
        }
    }

    func threadExited() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.runningThreads -= 1
            guard s.runningThreads == 0 else { return [] }
            s.phase = .stopped
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
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
    /// Requests waiting for a stream, lowest rank first.
    var queue = SenderQueue()
    /// Requests handed to connections and not yet answered.
    var inFlight = 0
    var runningThreads = 0
    /// Every `shutdown` call waiting for the threads to exit.
    var waiters: [CheckedContinuation<Void, Never>] = []
    var stats = PushSender.Stats()
    /// Lanes whose requests must not start (``PushSender/stopLanes(_:)``): a request of one that
    /// leaves the queue is handed back unsent, ``PushResponse/laneStopped``.
    var laneStops = LaneStops()

    var pendingCount: Int { queue.count }

    /// Takes up to `want` requests, lowest rank first; returns the phase too.
    mutating func exchange(want: Int) -> (Phase, [PushRequest]) {
        guard case .running = phase, want > 0, queue.count > 0 else { return (phase, []) }
        let taken = queue.take(want)
        inFlight += taken.count
        stats.peakInFlight = max(stats.peakInFlight, inFlight)
        return (phase, taken)
    }

    /// Puts requests a connection took but could not start back at the head of their rank in
    /// the queue.
    ///
    /// - Returns: false (nothing requeued) once shutdown began: the caller reports them.
    mutating func requeue(_ requests: [PushRequest]) -> Bool {
        guard case .running = phase else { return false }
        inFlight -= requests.count
        queue.putBack(requests)
        return true
    }

    /// Removes and returns every request not yet handed to a connection.
    mutating func takeUnsent() -> [PushRequest] {
        queue.removeAll()
    }
}

/// A connection's current multi handle, for `submit` and `shutdown` to wake the connection's thread.
///
/// The handle never leaves the lock: ``wake()`` calls `curl_multi_wakeup` under it, so once
/// the connection has replaced or cleared it with ``set(_:)`` no other thread can touch the
/// old handle, and the connection closes it on its own thread. ``set(_:)`` hands the old
/// handle back so that it is released outside the lock.
final class WakeTarget: Sendable {
    private let multi = Mutex<CurlMulti?>(nil)

    /// Wakes the connection's `curl_multi_poll`; `CURLM_OK` when there is no handle.
    func wake() -> CURLMcode { multi.withLock { $0?.wakeup() ?? CURLM_OK } }

    /// Installs `new` and returns the previous handle (called by the connection's thread).
    @discardableResult
    func set(_ new: CurlMulti?) -> CurlMulti? {
        multi.withLock { current in
            let old = current
            current = new
            return old
        }
    }
}
