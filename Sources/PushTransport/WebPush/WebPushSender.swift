import Dispatch
import Foundation
import Logging
import PushCore
import Synchronization

/// Sends Web Push messages with one VAPID credential to any number of origins: the Web Push
/// counterpart of a ``PushSender``, with the same calls (``submit(_:)``, `onResults`,
/// ``stopLanes(_:)``, ``withdraw(lane:)``, ``freeSlots``, ``stats()``, ``shutdown(deadline:)``).
///
/// Endpoints are untrusted input (a browser, i.e. anyone, supplies them), so a request reaches
/// the connection threads only once its endpoint was checked. A resolve thread of the sender's
/// own takes each submitted batch; per origin it resolves the host (``WebPushResolver``:
/// `getaddrinfo` on threads of their own, answers kept 30 s, waited for at most
/// ``PushSenderConfiguration/connectTimeout``), runs ``WebPushEndpointPolicy/check(_:resolved:)``
/// and then either pins the checked addresses to the request (``WebPushFields/pin``) and hands it
/// to the inner ``PushSender`` (``WebPushProvider``: connections per origin, VAPID, encryption on
/// the connection threads), or answers it at once, with no connection made:
/// `WebPushAnswer(endpointRefusal:)` for an address the policy refuses or a name that does not
/// exist, a `connect` transport failure (retried) for a lookup that failed or took too long.
///
/// One dead or slow origin holds only its own requests: its lookup or connection attempt delays
/// none of the others' (each origin has its own connections, and libcurl closes the idle ones
/// first when ``WebPushConfiguration/maxConnections`` are open).
public final class WebPushSender: Sendable {
    private struct Waiting {
        var request: PushRequest
        /// When the resolve thread first saw it, monotonic nanoseconds.
        var since: Int64
    }

    private struct State {
        var incoming: [PushRequest] = []
        /// Requests whose host is being resolved.
        var waiting: [Waiting] = []
        var started = false
        var stopping = false
        var stopped = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Answered here without a connection, since start.
        var refused = 0
    }

    private let inner: PushSender
    private let provider: WebPushProvider
    private let policy: WebPushEndpointPolicy
    private let resolveDeadline: Int64
    private let onResults: @Sendable ([PushResponse]) -> Void
    private let logger: Logger
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let resolver: WebPushResolver

    /// The libcurl in use.
    public var libcurl: LibcurlInfo { inner.libcurl }

    /// Creates a sender; starts nothing (see ``start()``).
    ///
    /// - Parameters:
    ///   - configuration: how to connect, as for every provider (``PushSenderConfiguration/connections``
    ///     is the number of connection threads, over which ``WebPushConfiguration/maxConnections`` is shared).
    ///   - webPush: the CA, the allowlist and the connection bound (``PushSenderConfiguration/extraCAFile``
    ///     is replaced by ``WebPushConfiguration/extraCAFile`` when that is set).
    ///   - credential: the VAPID key and subject.
    ///   - clock: UNIX seconds for the VAPID tokens; the system's by default.
    ///   - logger: connection events; never an endpoint's path, a key or a token.
    ///   - onResults: receives answers in batches, on a connection thread or the resolve thread.
    /// - Throws: ``PushTransportError`` as ``PushSender``'s initializers, and `.configuration`
    ///   for a bound below 1; `.curlSetup` when libcurl is older than 7.85 (`CURLOPT_PROTOCOLS_STR`).
    public init(configuration: PushSenderConfiguration, webPush: WebPushConfiguration, credential: WebPushCredential,
                clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) },
                logger: Logger, onResults: @escaping @Sendable ([PushResponse]) -> Void) throws {
        var configuration = configuration
        if let ca = webPush.extraCAFile { configuration.extraCAFile = ca }
        // Origins are many hosts: no stagger between the threads' first connections.
        configuration.connectionStagger = 0
        let provider = try WebPushProvider(configuration: webPush, credential: credential, threads: configuration.connections,
                                           databaseClock: configuration.databaseClock, clock: clock)
        self.provider = provider
        self.policy = webPush.endpointPolicy
        self.resolveDeadline = Int64(configuration.connectTimeout * 1e9)
        self.onResults = onResults
        self.logger = logger
        inner = try PushSender(provider: provider, configuration: configuration, logger: logger, onResults: onResults)
        let wake = self.wake
        resolver = WebPushResolver(finished: { wake.signal() })
    }

    /// Starts the resolve thread and the connection threads.
    ///
    /// - Throws: ``PushTransportError`` `.invalidState` if already started.
    public func start() throws {
        try inner.start()
        state.withLock { $0.started = true }
        let thread = Thread { [self] in run() }
        thread.name = "pushq-webpush-resolve-loop"
        thread.start()
    }

    /// Queues a batch; the resolve thread checks each endpoint, then the connection threads send.
    ///
    /// - Throws: ``PushTransportError`` `.invalidState` after ``shutdown(deadline:)`` began.
    public func submit(_ batch: [PushRequest]) throws {
        guard !batch.isEmpty else { return }
        try state.withLock { s in
            guard !s.stopping else { throw PushTransportError(.invalidState, "WebPushSender is shutting down; submit refused") }
            s.incoming.append(contentsOf: batch)
        }
        wake.signal()
    }

    /// As ``PushSender/stopLanes(_:)``: also takes the stopped lanes' requests still being checked.
    public func stopLanes(_ stops: LaneStops) -> [PushRequest] {
        var taken = state.withLock { s -> [PushRequest] in
            guard !stops.isEmpty else { return [] }
            var out: [PushRequest] = []
            s.incoming.removeAll { r in stops.stops(r.lane) ? (out.append(r), true).1 : false }
            s.waiting.removeAll { w in stops.stops(w.request.lane) ? (out.append(w.request), true).1 : false }
            return out
        }
        taken += inner.stopLanes(stops)
        return taken
    }

    /// As ``PushSender/withdraw(lane:)``, the requests still being checked included.
    public func withdraw(lane: String) -> [PushRequest] {
        var taken = state.withLock { s -> [PushRequest] in
            var out: [PushRequest] = []
            s.incoming.removeAll { r in r.lane == lane ? (out.append(r), true).1 : false }
            s.waiting.removeAll { w in w.request.lane == lane ? (out.append(w.request), true).1 : false }
            return out
        }
        taken += inner.withdraw(lane: lane)
        return taken
    }

    /// Streams free right now, less the requests still being checked (may be negative).
    public var freeSlots: Int {
        inner.freeSlots - state.withLock { $0.incoming.count + $0.waiting.count }
    }

    /// The connection threads' counters; `pending` counts the requests being checked too, and
    /// `openConnections` the push-service connections open now over all origins (sockets).
    public func stats() -> PushSender.Stats {
        var stats = inner.stats()
        stats.pending += state.withLock { $0.incoming.count + $0.waiting.count }
        stats.openConnections = provider.sockets.openNow
        return stats
    }

    /// The most push-service connections open at once since start, over all origins: at most
    /// ``WebPushConfiguration/maxConnections``.
    public var peakOpenConnections: Int { provider.sockets.peak }

    /// VAPID tokens signed since start (one per origin and about 11 hours).
    public var vapidTokensSigned: Int { provider.tokens.signedCount }

    /// Requests answered without a connection (endpoint refused, lookup failed) since start.
    public var refusedCount: Int { state.withLock { $0.refused } }

    /// As ``PushSender/shutdown(deadline:)``: the requests still being checked are unsent too.
    public func shutdown(deadline: Duration) async -> [PushRequest] {
        let mustWait = state.withLock { s -> Bool in
            s.stopping = true
            if !s.started { s.stopped = true }
            return !s.stopped
        }
        wake.signal()
        if mustWait {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.stopped { return true }
                    s.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
        let unsent = state.withLock { s -> [PushRequest] in
            defer { s.incoming = []; s.waiting = [] }
            return s.incoming + s.waiting.map(\.request)
        }
        return unsent + (await inner.shutdown(deadline: deadline))
    }

    /// The resolve thread: checks what came in and what waits for a lookup, until shutdown.
    private func run() {
        while true {
            let now = monotonicNanoseconds()
            let (work, stopping) = state.withLock { s -> ([Waiting], Bool) in
                let work = s.waiting + s.incoming.map { Waiting(request: $0, since: now) }
                s.incoming = []
                s.waiting = []
                return (s.stopping ? [] : work, s.stopping)
            }
            if stopping {
                let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    s.stopped = true
                    defer { s.waiters = [] }
                    return s.waiters
                }
                for w in waiters { w.resume() }
                return
            }
            if !work.isEmpty { check(work, now: now) }
            _ = wake.wait(timeout: .now() + .milliseconds(200))
        }
    }

    /// Checks each request's endpoint: sends, answers, or keeps it waiting for its lookup.
    private func check(_ work: [Waiting], now: Int64) {
        var ready: [PushRequest] = []
        var answered: [PushResponse] = []
        var still: [Waiting] = []
        for item in work {
            guard case .webPush(var fields) = item.request.fields else {
                ready.append(item.request)  // the provider refuses it (problem(with:))
                continue
            }
            let origin = fields.endpoint.origin
            let decision: WebPushEndpointPolicy.Decision
            if origin.host.literalAddress != nil {
                decision = policy.check(fields.endpoint, resolved: [])
            } else if case .name(let host) = origin.host {
                guard let lookup = resolver.lookup(host, now: now) else {
                    if now - item.since >= resolveDeadline {
                        answered.append(PushResponse(request: item.request, transportFailure: TransportFailure(
                            kind: .connect, message: "resolving \(origin) took longer than \(resolveDeadline / 1_000_000_000) s")))
                    } else {
                        still.append(item)
                    }
                    continue
                }
                if let addresses = lookup.addresses {
                    decision = policy.check(fields.endpoint, resolved: addresses)
                } else if lookup.nameUnknown {
                    decision = policy.check(fields.endpoint, resolved: [])
                } else {
                    answered.append(PushResponse(request: item.request, transportFailure: TransportFailure(
                        kind: .connect, message: "cannot resolve \(origin): \(lookup.message)")))
                    continue
                }
            } else {
                decision = policy.check(fields.endpoint, resolved: [])
            }
            switch decision {
            case .connect(let addresses):
                fields.pin = WebPushResolver.pin(origin, addresses)
                var request = item.request
                request.fields = .webPush(fields)
                ready.append(request)
            case .refuse(let refusal):
                logger.debug("Web Push endpoint refused", metadata: [LogKey.reason: "\(refusal.message)"])
                answered.append(PushResponse(request: item.request, answer: .webPush(WebPushAnswer(endpointRefusal: refusal))))
            }
        }
        if !still.isEmpty { state.withLock { $0.waiting.append(contentsOf: still) } }
        if !ready.isEmpty {
            do {
                try inner.submit(ready)
            } catch {
                answered += ready.map { PushResponse(request: $0, transportFailure: TransportFailure(kind: .cancelled, message: "the sender shut down")) }
            }
        }
        if !answered.isEmpty {
            state.withLock { $0.refused += answered.count }
            onResults(answered)
        }
    }
}
