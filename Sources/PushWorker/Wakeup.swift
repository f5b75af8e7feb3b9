import Synchronization

/// A level-triggered wake-up between the worker's loops: ``signal()`` from any thread,
/// ``wait(timeout:)`` from one task at a time.
///
/// A signal sent while nobody waits is kept (once) for the next wait, so none is lost.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var waiterID = 0
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    /// Wakes the waiter, or the next one.
    func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the first signal (or at once if one is pending), or after `timeout`.
    func wait(timeout: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLock { s -> Int? in
                if s.pending {
                    s.pending = false
                    return nil
                }
                s.waiterID += 1
                s.waiter = continuation
                return s.waiterID
            }
            guard let id else {
                continuation.resume()
                return
            }
            Task { [self] in
                try? await Task.sleep(for: timeout)
                let expired = self.state.withLock { s -> CheckedContinuation<Void, Never>? in
                    guard s.waiterID == id, let w = s.waiter else { return nil }
                    s.waiter = nil
                    return w
                }
                expired?.resume()
            }
        }
    }
}
