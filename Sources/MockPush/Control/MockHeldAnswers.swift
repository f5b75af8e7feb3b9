import Synchronization

/// The answers a server keeps while it holds them (``MockPushServer/holdAnswers()``): a provider
/// that stalls, then answers everything at once when the test says so, with no timing involved.
///
/// Each kept answer is a closure that writes it on its connection's event loop.
final class MockHeldAnswers: Sendable {
    private let state = Mutex<(holding: Bool, kept: [@Sendable () -> Void])>((false, []))
    /// ``MockClock/monotonicNanoseconds()`` when the last kept answer was written; 0 before any.
    private let lastWritten = Mutex<Int64>(0)

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

    /// A kept answer was written (and flushed) on its connection's event loop.
    func written() {
        let now = MockClock.monotonicNanoseconds()
        lastWritten.withLock { $0 = max($0, now) }
    }

    /// When the last kept answer was written, by the mock's clock; 0 before any.
    var lastWrittenNanoseconds: Int64 { lastWritten.withLock { $0 } }

    /// How many answers are kept now.
    var count: Int { state.withLock { $0.kept.count } }
}
