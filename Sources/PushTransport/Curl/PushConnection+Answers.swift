import CCurl
import PushCore

extension PushConnection {
    /// Collects finished transfers into `results`, except those the authorizer resends at once
    /// (FCM: a 401 with a token since replaced); returns whether any were resent (they wait in
    /// the sender's queue).
    func collectAnswers() -> Bool {
        var newConnections = 0
        var resend: [PushResponse] = []
        multi.forEachDone { done in
            guard let slot = slot(of: done) else { return }
            let removed = multi.remove(slot.easy)
            inFlight -= 1
            newConnections += slot.easy.connectsMade()
            defer {
                if removed == CURLM_OK {
                    freeSlots.append(slot)
                } else {
                    // Still attached for all we know: drop the slot; curl_easy_cleanup detaches it.
                    logger.error("curl_multi_remove_handle failed; dropping the stream", metadata: [LogKey.curlError: "\(curlMessage(removed))"])
                    allSlots.removeAll { $0 === slot }
                }
            }
            let (serial, issuedAt) = (slot.tokenSerial, slot.tokenIssuedAt)
            guard var response = slot.finish(result: done.result) else { return }
            if let status = response.status {
                response.answer = provider.answer(status: status, stream: slot, request: response.request)
            }
            if authorizer.answered(&response, tokenSerial: serial, tokenIssuedAt: issuedAt) {
                resend.append(response)
                return
            }
            if response.status != nil {
                act(on: provider.connectionAction(after: response), reason: response.answer?.reasonText, tokenSerial: serial)
            } else if isOneConnection, let failure = response.transportFailure, [.connectionLost, .connect, .tls].contains(failure.kind), !needsReopen {
                needsReopen = true
                reopenReason = "connection lost: \(failure.message)"
                if failure.kind == .connectionLost { core.state.withLock { $0.stats.connectionsEndedByServer += 1 } }
            }
            results.append(response)
        }
        if !resend.isEmpty, !core.state.withLock({ $0.requeue(resend.map(\.request)) }) {
            // Shutting down: report the answers instead of resending.
            results.append(contentsOf: resend)
        }
        countConnections(opened: newConnections)
        return !resend.isEmpty
    }

    /// The stream of a finished transfer: `CURLINFO_PRIVATE`, else found by its handle.
    private func slot(of done: CurlMulti.Done) -> StreamSlot? {
        if let pointer = done.privatePointer { return Unmanaged<StreamSlot>.fromOpaque(pointer).takeUnretainedValue() }
        // CURLINFO_PRIVATE failed: find the slot by its handle so it is freed and answered.
        logger.error("curl_easy_getinfo(CURLINFO_PRIVATE) failed", metadata: [LogKey.curlError: "\(curlMessage(done.privateResult))"])
        return allSlots.first { $0.easy.handle == done.easy }
    }

    /// Counts the TCP+TLS connections the finished transfers opened. More than one on the same
    /// multi handle means libcurl reconnected by itself (the server ended the connection): the
    /// handle is then replaced, so that the new connection takes the newest token.
    private func countConnections(opened newConnections: Int) {
        connectsOnMulti += newConnections
        var endedByServer = 0
        if connectsOnMulti > 1, isOneConnection, !needsReopen {
            needsReopen = true
            reopenReason = "libcurl reconnected"
            endedByServer = 1
        }
        guard newConnections > 0 else { return }
        let opened = !countedOpen
        countedOpen = true
        core.state.withLock { s in
            s.stats.connectionsOpened += newConnections
            s.stats.connectionsEndedByServer += endedByServer
            if opened { s.stats.openConnections += 1 }
        }
        logger.debug("opened connection", metadata: [LogKey.connectionsOpened: "\(newConnections)"])
    }

    /// Carries out what the provider says to do with the connection after an answer.
    private func act(on action: ConnectionAction, reason: String?, tokenSerial: Int) {
        switch action {
        case .keep:
            return
        case .renewTokenAndReopen:
            if !needsReopen { authorizer.renew(afterSerial: tokenSerial) }
            fallthrough
        case .reopen:
            if !needsReopen {
                needsReopen = true
                reopenReason = reason ?? "server error"
            }
        }
    }
}
