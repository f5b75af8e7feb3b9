import Synchronization

/// The answers a server keeps while it holds them (``MockPushServer/holdAnswers()``): a provider
/// that stalls, then answers everything at once when the test says so, with no timing involved.
///
/// Each kept answer is a closure that writes it on its connection's event loop.
final class MockHeldAnswers: Sendable {
    private let state = Mutex<(holding: Bool, kept: [@Sendable () -> Void])>((false, []))

    /// Whether answers are held now (read once per answer).
    var isHolding: Bool { state.withLock { $0.holding } }

    /// Answers decided from now on are kept.
    func hold() { state.withLock { $0.holding = true } }

    /// Stops holding and sends every kept answer, in the order they were kept.
    func release() {
        let kept = state.withLock { s -> [@Sendable () -> Void] in
            s.holding = false
            defer { s.kept = [] }
            return s.kept
        }
        for send in kept { send() }
    }

    /// Keeps `send` if answers are held now.
    ///
    /// - Returns: whether it was kept (else the caller answers now).
    func keep(_ send: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { s in
            guard s.holding else { return false }
            s.kept.append(send)
            return true
        }
    }

    /// How many answers are kept now.
    var count: Int { state.withLock { $0.kept.count } }
}
