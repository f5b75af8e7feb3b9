import PushStore

extension PushWorker {
    /// Waits for the insert trigger's NOTIFY and wakes the claim loop.
    func listenLoop(_ connection: PGConnection) async {
        var listening = false
        var backoff = 0.1
        while !stopRequested {
            do {
                if !listening {
                    try await connection.listen("pushq_enqueued")
                    listening = true
                }
                let received = try await connection.waitForNotifications(timeout: .seconds(30))
                backoff = 0.1
                if !received.isEmpty {
                    // A claim loop waiting for room looks whether the new rows outrank what it holds.
                    state.withLock { $0.enqueued = true }
                    workWake.signal()
                    roomWake.signal()
                    channelWake.signal()
                }
            } catch {
                logger.debug("listen failed; retrying", metadata: ["error": "\(error)"])
                // A stop request ends the backoff at once.
                await stopWake.wait(timeout: .milliseconds(Int(backoff * 1000)))
                backoff = min(backoff * 2, 5)
            }
        }
    }
}
