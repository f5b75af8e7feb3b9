import Synchronization

/// Faults, records and waiting, for tests in the same process.
extension MockPushServer {
    /// Sets (or with nil removes) the rule for one device token (case-insensitive).
    /// Rules apply to requests that pass validation.
    public func setRule(forToken token: String, _ rule: MockTokenRule?) {
        core.setRule(forToken: token, rule)
    }

    /// Random failures for valid requests without a token rule; nil turns them off.
    public func setFailureRate(_ rate: MockFailureRate?) {
        core.setFailureRate(rate)
    }

    /// Answers every request that passes validation with `answer`, over token rules and
    /// the failure rate, e.g. `.status(503, reason: "ServiceUnavailable")` for an outage;
    /// nil turns it off. Rules do not advance while it is on. Applies to open connections
    /// from their next request.
    public func answerEverything(with answer: MockAnswer?) {
        core.setAnswerAll(answer)
    }

    /// Replaces the connection faults (GOAWAY after N, close after N, idle kill, token
    /// age). `idleTimeoutMilliseconds` applies to connections opened afterwards, the others
    /// to open connections too.
    public func setFaults(_ faults: MockConnectionFaults) {
        core.setFaults(faults)
    }

    /// Counters since start or the last `reset()`.
    public func stats() -> MockPushStats {
        core.stats()
    }

    /// The recorded requests, in order of arrival (empty when recording is off).
    public func requests() -> [MockRecordedRequest] {
        core.requests()
    }

    /// Clears rules, the answer-all, the failure rate, faults (back to the configured ones),
    /// counters and records. A refusal of connections stays in force.
    public func reset() {
        core.reset()
    }

    /// Returns once `count` requests (since start or the last `reset()`) have arrived.
    ///
    /// - Throws: `MockPushError.timeout` (with the count reached) when `timeout` passes
    ///   first; `CancellationError` when the task is cancelled.
    public func waitForRequests(count: Int, timeout: Duration) async throws {
        try await waitUntil(timeout: timeout, "\(count) requests") { $0.requests >= count }
    }

    /// Returns once `condition` holds for the counters, e.g.
    /// `{ $0.connectionsOpened >= 2 && $0.count(status: 410) == 1 }`. The condition is
    /// checked at once and after every counter change (requests, connections, faults),
    /// under the server's lock: keep it cheap and don't call the server from it.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait.
    ///   - what: words for the timeout error ("2 connections").
    /// - Throws: `MockPushError.timeout` when `timeout` passes first; `CancellationError`
    ///   when the task is cancelled.
    public func waitUntil(
        timeout: Duration,
        _ what: String = "the condition",
        _ condition: @escaping @Sendable (MockPushStats) -> Bool
    ) async throws {
        let core = self.core
        let pending = PendingWait()
        let reached: Bool = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                guard let id = core.addWaiter(condition: condition, notify: { continuation.resume(returning: $0) }) else { return }
                let timer = Task {
                    try await Task.sleep(for: timeout)
                    core.cancelWaiter(id: id)
                }
                pending.set(id: id, timer: timer)
            }
        } onCancel: {
            if let id = pending.id { core.cancelWaiter(id: id) }
        }
        pending.timer?.cancel()
        try Task.checkCancellation()
        if !reached {
            let seen = core.stats()
            throw MockPushError(.timeout, "waited \(timeout) for \(what); \(seen.requests) requests arrived, \(seen.connectionsOpened) connections opened")
        }
    }
}

/// The pending waiter's id and timeout task, shared with the cancellation handler.
private final class PendingWait: Sendable {
    private let state = Mutex<(id: Int?, timer: Task<Void, any Error>?)>((nil, nil))
    func set(id: Int, timer: Task<Void, any Error>) { state.withLock { $0 = (id, timer) } }
    var id: Int? { state.withLock { $0.id } }
    var timer: Task<Void, any Error>? { state.withLock { $0.timer } }
}
