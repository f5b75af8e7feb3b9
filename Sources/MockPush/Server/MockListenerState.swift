import NIOCore
import NIOPosix

/// The listening socket's life: bound by `start`, closed by a refusal, bound again on the
/// same port, closed for good by `stop`; and the connections it accepted, so a refusal
/// can close them.
///
/// Pure: each transition returns what to close, bind or complete; `MockListener` carries
/// it out. Every move into `binding` or `refusing` takes a new generation, so a bind or a
/// timed reopen that an `accept`, a `refuse` or a `stop` overtook finds it is stale.
struct MockListenerState {
    enum Phase {
        case stopped
        /// A bind is in flight; `done` completes when it is over (whoever leaves this phase completes it).
        case binding(generation: Int, done: EventLoopPromise<Void>)
        case listening(any Channel)
        /// Not listening; `closed` completes once the listener and the connections are closed.
        case refusing(generation: Int, closed: EventLoopFuture<Void>)
    }

    /// What `refuse` leaves to do: after `previous`, close `listener` then `connections`,
    /// then complete `closed`. `overtaken` is a bind in flight that the refusal overtook.
    struct Refusal {
        var generation: Int
        var previous: EventLoopFuture<Void>?
        var listener: (any Channel)?
        var connections: [any Channel]
        var closed: EventLoopPromise<Void>
        var overtaken: EventLoopPromise<Void>?
    }

    /// What `accept` leaves to do.
    enum Acceptance {
        /// Already listening: nothing.
        case listening
        /// Another bind is in flight: wait for it.
        case wait(EventLoopFuture<Void>)
        /// Bind `port` once `after` (the refusal's closing) is over, then complete `done`.
        case bind(generation: Int, group: MultiThreadedEventLoopGroup, port: Int, after: EventLoopFuture<Void>, done: EventLoopPromise<Void>)
    }

    /// What `stop` leaves to do.
    struct Stop {
        var group: MultiThreadedEventLoopGroup
        var listener: (any Channel)?
        var overtaken: EventLoopPromise<Void>?
        /// The port keeper to close (``MockListener/portKeeper(host:port:)``).
        var keeper: CInt?
    }

    private(set) var phase = Phase.stopped
    private(set) var group: MultiThreadedEventLoopGroup?
    /// The port `start` bound; kept while refusing, so `accept` binds it again.
    private(set) var port: Int?
    private var connections: [ObjectIdentifier: any Channel] = [:]
    private var generation = 0
    /// The socket that holds `port` from `start` to `stop`, refusing or not.
    private var keeper: CInt?

    var isStopped: Bool {
        if case .stopped = phase { return true }
        return false
    }

    /// `stopped` → `binding`. Returns the generation and the promise of the first bind.
    mutating func start(group: MultiThreadedEventLoopGroup) throws -> (generation: Int, done: EventLoopPromise<Void>) {
        guard isStopped else { throw MockPushError(.alreadyStarted, "start() called twice") }
        self.group = group
        generation += 1
        let done = group.next().makePromise(of: Void.self)
        phase = .binding(generation: generation, done: done)
        return (generation, done)
    }

    /// Keeps `fd` as the port's keeper until `stop`. Returns false when stopped (or a keeper
    /// is kept already): the caller closes `fd`.
    mutating func keep(_ fd: CInt) -> Bool {
        guard !isStopped, keeper == nil else { return false }
        keeper = fd
        return true
    }

    /// `binding(generation)` → `listening`. Returns the promise to succeed, or nil when a
    /// refusal or `stop` overtook the bind: the caller closes `channel` then.
    mutating func bound(generation: Int, channel: any Channel, port: Int) -> EventLoopPromise<Void>? {
        guard case .binding(generation, let done) = phase else { return nil }
        phase = .listening(channel)
        self.port = port
        return done
    }

    /// The bind of `generation` failed. Returns the promise to fail (nil when overtaken) and,
    /// when it was `start`'s bind, the group to shut down (back to `stopped`); a bind
    /// again leaves the mock refusing.
    mutating func bindFailed(generation: Int) -> (done: EventLoopPromise<Void>, shutDown: MultiThreadedEventLoopGroup?)? {
        guard case .binding(generation, let done) = phase, let group else { return nil }
        guard port != nil else {
            phase = .stopped
            self.group = nil
            return (done, group)
        }
        self.generation += 1
        phase = .refusing(generation: self.generation, closed: group.next().makeSucceededVoidFuture())
        return (done, nil)
    }

    /// Any started phase → `refusing`, taking the listener and every connection to close.
    ///
    /// - Throws: `MockPushError.notStarted` before `start` or after `stop`.
    mutating func refuse() throws -> Refusal {
        guard let group, !isStopped else {
            throw MockPushError(.notStarted, "cannot refuse connections: the server is not running")
        }
        guard port != nil else {
            throw MockPushError(.notStarted, "cannot refuse connections: start() has not returned yet")
        }
        generation += 1
        var refusal = Refusal(
            generation: generation, listener: nil, connections: Array(connections.values),
            closed: group.next().makePromise(of: Void.self)
        )
        connections = [:]
        switch phase {
        case .stopped: break
        case .listening(let channel): refusal.listener = channel
        case .binding(_, let done): refusal.overtaken = done
        case .refusing(_, let closed): refusal.previous = closed
        }
        phase = .refusing(generation: generation, closed: refusal.closed.futureResult)
        return refusal
    }

    /// `refusing` → `binding` (a new bind of the same port); `binding` → wait for it;
    /// `listening` → nothing.
    ///
    /// - Throws: `MockPushError.notStarted` before `start` or after `stop`.
    mutating func accept() throws -> Acceptance {
        switch phase {
        case .stopped:
            throw MockPushError(.notStarted, "cannot accept connections: the server is not running")
        case .listening:
            return .listening
        case .binding(_, let done):
            return .wait(done.futureResult)
        case .refusing(_, let closed):
            guard let group, let port else {
                throw MockPushError(.notStarted, "cannot accept connections: the server never listened")
            }
            generation += 1
            let done = group.next().makePromise(of: Void.self)
            phase = .binding(generation: generation, done: done)
            return .bind(generation: generation, group: group, port: port, after: closed, done: done)
        }
    }

    /// `accept` for a timed reopen: only when the refusal of `generation` is still in force
    /// (not overtaken by an `accept`, another `refuse` or `stop`), else nil.
    mutating func reopen(generation: Int) -> Acceptance? {
        guard case .refusing(generation, _) = phase else { return nil }
        return try? accept()
    }

    /// Any phase → `stopped`. Returns the group to shut down, the listener to close and a
    /// bind in flight to fail; nil when already stopped.
    mutating func stop() -> Stop? {
        guard let group else { return nil }
        var stop = Stop(group: group, keeper: keeper)
        keeper = nil
        switch phase {
        case .stopped, .refusing: break
        case .listening(let channel): stop.listener = channel
        case .binding(_, let done): stop.overtaken = done
        }
        phase = .stopped
        self.group = nil
        port = nil
        connections = [:]
        return stop
    }

    /// A connection was accepted. Returns false when the mock is refusing or stopped (the
    /// connection slipped in as the listener closed): the caller closes it.
    mutating func connectionOpened(_ channel: any Channel) -> Bool {
        switch phase {
        case .listening, .binding:
            connections[ObjectIdentifier(channel)] = channel
            return true
        case .refusing, .stopped:
            return false
        }
    }

    mutating func connectionClosed(_ channel: any Channel) {
        connections[ObjectIdentifier(channel)] = nil
    }
}
