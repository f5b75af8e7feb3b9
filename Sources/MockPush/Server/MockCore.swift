import Logging
import Synchronization

/// What every connection of one server shares: the configuration, the key material,
/// and the mutable state behind a `Mutex`.
///
/// Sendable because its stored properties are immutable and Sendable, and the only
/// mutable part is inside the `Mutex`.
final class MockCore: Sendable {
    let configuration: MockPushConfiguration
    let verifier: JWTVerifier
    let fcmVerifier: MockFCMVerifier
    let validator: RequestValidator
    let state: Mutex<MockSharedState>
    let logger: Logger
    /// `faults.tokenMaxAgeSeconds` in force (Apple's 3600 when nil). A copy outside the
    /// lock because every request reads it during validation, before it takes the lock;
    /// written under the lock whenever `faults` changes (`faultsChanged`).
    let tokenMaxAgeSeconds: Atomic<Int64>
    /// Answers kept while the server holds them (`holdAnswers()`), outside the shared state's lock.
    let heldAnswers = MockHeldAnswers()

    /// - Throws: `MockPushError` when a token key cannot be loaded.
    init(configuration: MockPushConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.verifier = try JWTVerifier(tokenKeys: configuration.tokenKeys, futureSkewSeconds: configuration.jwtFutureSkewSeconds)
        self.fcmVerifier = try MockFCMVerifier(configuration: configuration.fcm, futureSkewSeconds: configuration.jwtFutureSkewSeconds)
        self.validator = RequestValidator(bundleIDs: configuration.bundleIDs)
        self.state = Mutex(MockSharedState(configuration: configuration))
        self.logger = logger
        self.tokenMaxAgeSeconds = Atomic(Self.maxAge(configuration.faults))
    }

    /// The token age limit `faults` sets.
    private static func maxAge(_ faults: MockConnectionFaults) -> Int64 {
        faults.tokenMaxAgeSeconds.map(Int64.init) ?? MockAPNsRules.providerTokenMaxAgeSeconds
    }

    /// Publishes the copies of `state.faults` kept outside the lock; call under the lock.
    func faultsChanged(_ faults: MockConnectionFaults) {
        tokenMaxAgeSeconds.store(Self.maxAge(faults), ordering: .relaxed)
    }

    func now() -> Int64 { configuration.clock() }

    /// Registers a new connection; returns its id and the faults in force now.
    func connectionOpened() -> (id: Int, faults: MockConnectionFaults) {
        updateStats { s in
            let id = s.nextConnectionID
            s.nextConnectionID += 1
            s.stats.connectionsOpened += 1
            s.stats.connectionsOpen += 1
            s.stats.connectionsOpenPeak = max(s.stats.connectionsOpenPeak, s.stats.connectionsOpen)
            return (id, s.faults)
        }
    }

    func connectionClosed() {
        updateStats { $0.stats.connectionsOpen -= 1 }
    }

    /// Changes the state under the lock, then notifies the waiters whose condition now holds.
    func updateStats<T>(_ body: (inout MockSharedState) -> T) -> T {
        let (result, reached) = state.withLock { s in
            let result = body(&s)
            return (result, s.satisfiedWaiters())
        }
        for waiter in reached { waiter.notify(true) }
        return result
    }

    /// Calls `notify(true)` once `condition` holds for the counters (at once if it does),
    /// or `notify(false)` from `cancelWaiter`. Returns the waiter id, nil if it already held.
    /// Conditions are evaluated under the lock on every counter change: keep them cheap.
    func addWaiter(condition: @escaping @Sendable (MockPushStats) -> Bool, notify: @escaping @Sendable (Bool) -> Void) -> Int? {
        let id = state.withLock { $0.addWaiter(condition: condition, notify: notify) }
        if id == nil { notify(true) }
        return id
    }

    func cancelWaiter(id: Int) {
        let waiter = state.withLock { $0.removeWaiter(id: id) }
        waiter?.notify(false)
    }
}
