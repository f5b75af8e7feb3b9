import Foundation
import Logging
import PushCore

/// Sends notifications to one provider over HTTP/2 (libcurl), in batches.
///
/// One sender talks to one provider with one credential: APNs with an ``APNsCredential``
/// (``init(configuration:apns:credential:logger:onResults:)``, `APNs/PushSender+APNs.swift`), or
/// FCM with a service account's ``FCMAccessTokenProvider``
/// (``init(configuration:fcm:tokens:logger:onResults:)``, `FCM/PushSender+FCM.swift`). The
/// provider's own part (URL, headers, authentication, answer parsing) is a ``PushProvider``; the
/// connection threads, streams, queue and shutdown described here are the same for every provider.
///
/// Work goes in with ``submit(_:)`` and comes back through `onResults`, a batch at a time,
/// so the cost per notification stays a few microseconds above libcurl's own: no `Task`,
/// continuation or lock per notification.
///
/// The sender owns ``PushSenderConfiguration/connections`` threads (Foundation `Thread`s,
/// not Swift's cooperative pool), each driving one HTTP/2 connection with at most the
/// provider's streams per connection in flight (``APNsConfiguration/streamsPerConnection``,
/// ``FCMConfiguration/streamsPerConnection``). Requests beyond
/// that wait in the sender's queue; ``freeSlots`` says how many more fit without queueing.
///
/// `onResults` is called on a connection thread: it must return quickly (hand the batch
/// to another queue) and must not call ``shutdown(deadline:)``. It may call ``submit(_:)``.
///
/// Outcomes (``PushResponse/outcome``) are for the caller to carry out, including
/// `.retryNow` (resubmit at once, without counting an attempt). The sender itself only
/// takes care of connections and tokens: it renews a token the provider condemns and reopens
/// a connection after answers that condemn it (see `ConnectionAction`).
///
/// Lifecycle: `init` (checks libcurl, the CA file and the credential, builds each
/// connection's first stream; starts nothing), ``start()``, any number of ``submit(_:)``,
/// ``shutdown(deadline:)``.
public final class PushSender: Sendable {
    /// Counters since ``start()``.
    public struct Stats: Sendable, Hashable {
        /// Requests that got an answer or a failure.
        public var answered = 0
        /// TCP+TLS connections opened (libcurl's `CURLINFO_NUM_CONNECTS`, summed).
        public var connectionsOpened = 0
        /// Times a connection was closed on purpose and replaced (token expiry, 5xx, idle...).
        public var reopens = 0
        /// Times a connection switched to a newer bearer token without reopening.
        public var tokenSwitches = 0
        /// Connections open now: their current handle has opened a TCP+TLS connection that
        /// was not closed since.
        public var openConnections = 0
        /// Connections the provider ended (an HTTP/2 GOAWAY, or the connection dropped):
        /// libcurl saw the connection lost or had to reconnect. libcurl does not report GOAWAY
        /// frames themselves, so a GOAWAY and a drop count alike.
        public var connectionsEndedByServer = 0
        /// Requests waiting for a stream.
        public var pending = 0
        /// Requests handed to libcurl and not yet answered.
        public var inFlight = 0
        /// The most requests ever in flight at once, over all connections.
        public var peakInFlight = 0
    }

    private let core: SenderCore
    private let connections: [any SenderConnection]
    private let baseURL: String
    /// The libcurl in use (version, TLS library, nghttp2).
    public let libcurl: LibcurlInfo

    /// Creates a sender to `provider`; starts nothing (see ``start()``). The provider's
    /// initializers (`PushSender+APNs.swift`, `PushSender+FCM.swift`) build `provider`.
    ///
    /// - Throws: ``PushTransportError`` if libcurl lacks HTTP/2 or is too old, the
    ///   configuration is invalid, the CA file cannot be read (the message names the file), or
    ///   libcurl refuses a setting (each connection builds its first stream here, so nothing
    ///   about the setup is left to fail per request).
    init<P: PushProvider>(provider: P, configuration: PushSenderConfiguration, logger: Logger,
                          onResults: @escaping @Sendable ([PushResponse]) -> Void) throws {
        libcurl = try LibcurlInfo.checked()
        try configuration.validate()
        let transfer = try CurlTransferSettings(requestTimeout: configuration.requestTimeout, connectTimeout: configuration.connectTimeout,
                                                extraCAFile: configuration.extraCAFile, verbose: configuration.curlVerbose, libcurl: libcurl)
        var logger = logger
        logger[metadataKey: LogKey.provider] = "\(provider.provider.rawValue)"
        let core = SenderCore(configuration: configuration, streamsPerConnection: provider.streamsPerConnection, provider: provider.provider,
                              transfer: transfer, logger: logger,
                              onResults: onResults)
        self.core = core
        self.baseURL = provider.baseURL
        connections = try (0..<configuration.connections).map { try PushConnection(index: $0, core: core, provider: provider) }
    }

    /// Starts the connection threads. Connections open on first use.
    ///
    /// - Throws: ``PushTransportError`` `.invalidState` if already started.
    public func start() throws {
        try core.state.withLock { s in
            guard s.phase == .created else { throw PushTransportError(.invalidState, "PushSender.start() called twice") }
            s.phase = .running
            s.runningThreads = connections.count
        }
        core.logger.info("\(core.provider.serviceName) sender starting", metadata: [
            LogKey.url: "\(baseURL)",
            LogKey.connections: "\(connections.count)",
            LogKey.streams: "\(core.streamsPerConnection)",
            "libcurl": "\(libcurl.version) \(libcurl.ssl) nghttp2/\(libcurl.nghttp2)",
        ])
        let startedAt = monotonicNanoseconds()
        for connection in connections {
            let thread = Thread { connection.run(startedAt: startedAt) }
            thread.name = "pushq-\(core.provider.rawValue)-\(connection.index)"
            thread.start()
        }
    }

    /// Queues a batch; connections pick it up at once, the lowest ``PushRequest/rank`` first.
    ///
    /// - Throws: ``PushTransportError`` `.invalidState` after ``shutdown(deadline:)`` began.
    public func submit(_ batch: [PushRequest]) throws {
        guard !batch.isEmpty else { return }
        try core.state.withLock { s in
            switch s.phase {
            case .created, .running: s.queue.append(contentsOf: batch)
            case .stopping, .stopped: throw PushTransportError(.invalidState, "PushSender is shutting down; submit refused")
            }
        }
        core.wakeAll()
    }

    /// Stops the requests of the lanes `stops` names from starting, and returns those of them
    /// that wait in the queue, removed from it (never sent: the caller gives them back).
    ///
    /// Under the sender's lock, like every take from the queue: a request either started before
    /// this call or never starts while `stops` names its lane. A request of a stopped lane
    /// submitted later is handed back when it leaves the queue (``PushResponse/laneStopped``),
    /// through `onResults`. Requests in flight finish. A later call replaces `stops` (an empty
    /// one lets every lane start again).
    public func stopLanes(_ stops: LaneStops) -> [PushRequest] {
        core.state.withLock { s in
            s.laneStops = stops
            guard !stops.isEmpty, s.queue.count > 0 else { return [] }
            return s.queue.remove { stops.stops($0.lane) }
        }
    }

    /// Removes and returns the requests of `lane` that wait in the queue (a lane cancelled: the
    /// caller ends them); later requests of the lane are not affected.
    public func withdraw(lane: String) -> [PushRequest] {
        core.state.withLock { s in
            guard s.queue.count > 0 else { return [] }
            return s.queue.remove { $0.lane == lane }
        }
    }

    /// Streams free right now: total window minus queued and in-flight requests (may be negative).
    public var freeSlots: Int {
        let capacity = core.configuration.connections * core.streamsPerConnection
        return core.state.withLock { capacity - $0.pendingCount - $0.inFlight }
    }

    /// Counters since ``start()``.
    public func stats() -> Stats {
        core.state.withLock { s in
            var stats = s.stats
            stats.pending = s.pendingCount
            stats.inFlight = s.inFlight
            return stats
        }
    }

    /// Stops accepting work, waits for in-flight requests up to `deadline`, and returns the
    /// requests that were never handed to the provider.
    ///
    /// Requests still in flight at the deadline are reported through `onResults` as
    /// `TransportFailure.Kind.cancelled` (outcome unknown). Returns when every connection
    /// thread has exited; any number of callers may wait at once (a later call's unsent list
    /// is empty, and an earlier deadline stands).
    public func shutdown(deadline: Duration) async -> [PushRequest] {
        let (seconds, attoseconds) = deadline.components
        let deadlineNanos = monotonicNanoseconds() + seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        let (unsent, mustWait) = core.state.withLock { s -> ([PushRequest], Bool) in
            let unsent = s.takeUnsent()
            switch s.phase {
            case .created: s.phase = .stopped; return (unsent, false)
            case .running: s.phase = .stopping(deadline: deadlineNanos); return (unsent, true)
            case .stopping: return (unsent, true)
            case .stopped: return (unsent, false)
            }
        }
        core.wakeAll()
        if mustWait {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = core.state.withLock { s -> Bool in
                    if s.runningThreads == 0 { return true }
                    s.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        core.logger.info("\(core.provider.serviceName) sender stopped", metadata: [LogKey.unsent: "\(unsent.count)"])
        return unsent
    }
}
