import Logging
import Synchronization

/// What every connection of one server shares: the configuration, the key material,
/// and the mutable state behind a `Mutex`.
///
/// Sendable because its stored properties are immutable and Sendable, and the only
/// mutable part is inside the `Mutex`.
final class MockCore: Sendable {
    let configuration: MockAPNsConfiguration
    let verifier: JWTVerifier
    let validator: RequestValidator
    let state: Mutex<MockSharedState>
    let logger: Logger

    /// - Throws: `MockAPNsError` when a token key cannot be loaded.
    init(configuration: MockAPNsConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.verifier = try JWTVerifier(tokenKeys: configuration.tokenKeys, futureSkewSeconds: configuration.jwtFutureSkewSeconds)
        self.validator = RequestValidator(bundleIDs: configuration.bundleIDs)
        self.state = Mutex(MockSharedState(configuration: configuration))
        self.logger = logger
    }

    func now() -> Int64 { configuration.clock() }

    /// Registers a new connection; returns its id and the faults in force now.
    func connectionOpened() -> (id: Int, faults: MockConnectionFaults) {
        state.withLock { s in
            let id = s.nextConnectionID
            s.nextConnectionID += 1
            s.stats.connectionsOpened += 1
            s.stats.connectionsOpen += 1
            return (id, s.faults)
        }
    }

    func connectionClosed() {
        state.withLock { $0.stats.connectionsOpen -= 1 }
    }

    /// Calls `notify(true)` once `count` requests have arrived (at once if they have),
    /// or `notify(false)` from `cancelWaiter`. Returns the waiter id, nil if already reached.
    func addWaiter(count: Int, notify: @escaping @Sendable (Bool) -> Void) -> Int? {
        let id = state.withLock { $0.addWaiter(count: count, notify: notify) }
        if id == nil { notify(true) }
        return id
    }

    func cancelWaiter(id: Int) {
        let waiter = state.withLock { $0.removeWaiter(id: id) }
        waiter?.notify(false)
    }
}
