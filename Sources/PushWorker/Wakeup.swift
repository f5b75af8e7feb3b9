import Synchronization

/// A level-triggered wake-up between the worker's loops: ``signal()`` from any thread,
/// ``wait(timeout:)`` from any task.
///
/// A signal sent while nobody waits is kept (once) for the next wait, so none is lost; a
/// signal wakes every task waiting at that moment.
///
/// A wait is structured: its timer is a child task that is cancelled and awaited before
/// ``wait(timeout:)`` returns, so no sleeping task outlives the call, and cancelling the
/// waiting task ends the wait at once.
final class Wakeup: Sendable {
    private struct State {
        var pending = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// Wakes every waiter, or the next one to wait.
    func signal() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if s.waiters.isEmpty {
                s.pending = true
                return []
            }
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns at the first signal (or at once if one is pending), after `timeout`, or when
    /// the calling task is cancelled: true unless `timeout` ran out first.
    @discardableResult
    func wait(timeout: Duration) async -> Bool {
        let wasPending = state.withLock { s -> Bool in
            defer { s.pending = false }
            return s.pending
        }
        if wasPending || Task.isCancelled { return true }
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await Task.sleep(for: timeout)) == nil }
            group.addTask { await self.waitForSignal(id: id); return true }
            let signaled = await group.next() ?? true
            group.cancelAll()
            return signaled
        }
    }

    /// Suspends until a signal, or until the task is cancelled.
    private func waitForSignal(id: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.pending || Task.isCancelled {
                        s.pending = false
                        return true
                    }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
