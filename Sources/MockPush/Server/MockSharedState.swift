/// The state every connection shares: rules, faults, counters, records, waiters.
///
/// Lives in a `Mutex` (see `MockCore`); connections take the lock once per request
/// (`decide`), so the transitions here are small and return what to do next.
struct MockSharedState {
    struct Waiter {
        var id: Int
        var condition: @Sendable (MockPushStats) -> Bool
        var notify: @Sendable (Bool) -> Void
    }

    var rules: [String: MockRuleProgress<MockAnswer>] = [:]
    /// Answer for every valid request, before rules and the failure rate (`answerEverything`).
    var answerAll: MockAnswer?
    var failureRate: MockFailureRate?
    var failureRNG = SplitMix64(seed: 1)
    var faults: MockConnectionFaults
    var stats = MockPushStats()
    var records: [MockRecordedRequest] = []
    /// FCM access tokens, rules and records (`MockConnectionHandler+FCM`).
    var fcm: MockFCMState
    /// Web Push subscriptions, rules and records (`MockConnectionHandler+WebPush`).
    var webPush = MockWebPushState()
    /// Broadcast channels, the next management request's injected answer, and the management
    /// requests recorded (`MockConnectionHandler+Channels`).
    var channels = MockChannelStore()
    var channelFault: MockAnswer?
    /// The next create's answer is lost after the channel was created (``MockAnswer/Kind/noAnswer``
    /// or ``MockAnswer/Kind/reset``), once.
    var channelCreateAnswerLost: MockAnswer.Kind?
    /// Milliseconds every management answer waits before it goes out (0: at once).
    var channelLatencyMilliseconds = 0
    var channelRecords: [MockRecordedRequest] = []
    /// The channel-management listener's bound port, once started (`GET /_mock/management`).
    var managementPort: Int?
    var nextConnectionID = 1
    var nextWaiterID = 1
    var waiters: [Waiter] = []
    let recordRequests: Bool
    let recordBodies: Bool
    let maxRecordedRequests: Int

    init(configuration: MockPushConfiguration) {
        faults = configuration.faults
        fcm = MockFCMState(configuration: configuration.fcm)
        recordRequests = configuration.recordRequests
        recordBodies = configuration.recordBodies
        maxRecordedRequests = configuration.maxRecordedRequests
    }

    /// Back to the state at start: no rules, no answer-all, no failure rate, the configured
    /// faults, zero counters (open connections and `listening` stay), no records, no channels.
    /// Waiters stay.
    mutating func reset(configuration: MockPushConfiguration) {
        rules = [:]
        answerAll = nil
        failureRate = nil
        faults = configuration.faults
        let (open, listening) = (stats.connectionsOpen, stats.listening)
        stats = MockPushStats()
        stats.connectionsOpen = open
        stats.connectionsOpenPeak = open
        stats.listening = listening
        records = []
        fcm = MockFCMState(configuration: configuration.fcm)
        webPush.reset()
        channels = MockChannelStore()
        channelFault = nil
        channelCreateAnswerLost = nil
        channelLatencyMilliseconds = 0
        channelRecords = []
    }

    mutating func setFailureRate(_ rate: MockFailureRate?) {
        failureRate = rate
        failureRNG = SplitMix64(seed: rate?.seed ?? 1)
    }

    /// The answer for a request that passed validation: the answer-all, else the token's
    /// rule (an answer-all leaves rules where they are), else a random failure, else `.normal`.
    mutating func answer(forValidToken token: Substring) -> MockAnswer {
        if let answerAll { return answerAll }
        if !rules.isEmpty, let answer = rules[token.lowercased()]?.next() { return answer }
        if let failureRate, failureRate.rate > 0 {
            let draw = Double(failureRNG.next() >> 11) / Double(1 << 53)
            if draw < failureRate.rate { return failureRate.answer }
        }
        return .normal
    }

    /// Counts how a request authenticated (`token`, `certificate` or `none`) and what it did to its
    /// connection's provider token.
    mutating func countAuthentication(auth: String, switched: Bool, violation: ConnectionTokenState.Violation?) {
        switch auth {
        case "token": stats.tokenAuthRequests += 1
        case "certificate": stats.certificateAuthRequests += 1
        default: break
        }
        if switched { stats.tokenSwitches += 1 }
        switch violation {
        case .switchTooSoon: stats.tokenSwitchViolations += 1
        case .keyIDChanged: stats.keyIDChanges += 1
        case nil: break
        }
    }

    /// Counts one request and its decided answer, records it when enabled, and returns
    /// the waiters whose condition now holds (to be notified outside the lock).
    mutating func count(
        connectionID: Int,
        status: Int?,
        reason: String?,
        kind: MockAnswer.Kind,
        record: () -> MockRecordedRequest?
    ) -> [Waiter] {
        stats.requests += 1
        stats.requestsByConnection[connectionID, default: 0] += 1
        switch kind {
        case .noAnswer: stats.unanswered += 1
        case .reset: stats.resets += 1
        case .normal, .status: break
        }
        if let status { stats.byStatus[status, default: 0] += 1 }
        if let reason { stats.byReason[reason, default: 0] += 1 }
        if recordRequests {
            if records.count < maxRecordedRequests, var r = record() {
                r.sequenceNumber = stats.requests
                records.append(r)
            } else {
                stats.recordsDropped += 1
            }
        }
        return satisfiedWaiters()
    }

    /// Removes and returns the waiters whose condition now holds (to be notified outside the lock).
    mutating func satisfiedWaiters() -> [Waiter] {
        guard !waiters.isEmpty else { return [] }
        let stats = self.stats
        let reached = waiters.filter { $0.condition(stats) }
        if !reached.isEmpty { waiters.removeAll { $0.condition(stats) } }
        return reached
    }

    /// Adds a waiter, or returns nil when `condition` already holds.
    mutating func addWaiter(condition: @escaping @Sendable (MockPushStats) -> Bool, notify: @escaping @Sendable (Bool) -> Void) -> Int? {
        if condition(stats) { return nil }
        let id = nextWaiterID
        nextWaiterID += 1
        waiters.append(Waiter(id: id, condition: condition, notify: notify))
        return id
    }

    /// Removes a waiter (timeout, cancellation); returns it if it was still waiting.
    mutating func removeWaiter(id: Int) -> Waiter? {
        guard let i = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: i)
    }
}
