import CCurl
import Foundation
import PushCore

extension PushConnection {
    /// Starts a batch the sender handed over: hands back the requests of stopped lanes
    /// (`stops`, read with the batch), refuses the requests that cannot be sent, has the batch
    /// authorized, then loads each request into a free stream.
    func start(_ work: [PushRequest], now: Int64, stops: LaneStops = LaneStops()) {
        let work = refuseUnsendable(stops.isEmpty ? work : handBackStopped(work, stops))
        guard !work.isEmpty else { return }
        if multiUsed, inFlight == 0, Double(now - lastActivity) / 1e9 > core.configuration.idleReopenAfter {
            needsReopen = true
            reopenReason = "idle"
            reopen()
        }
        lastActivity = now
        // Once per batch; may block this thread (FCM: while no access token is usable).
        let token: BearerToken?
        switch authorizer.authorize(newConnection: !multiUsed) {
        case .certificate:
            token = nil
        case .bearer(let bearer):
            if pinnedSerial != 0, bearer.serial != pinnedSerial { core.state.withLock { $0.stats.tokenSwitches += 1 } }
            pinnedSerial = bearer.serial
            token = bearer
        case .refused(let refusal):
            refuse(work, refusal)
            return
        }
        multiUsed = true
        let nowSeconds = Int64(time(nil))
        let databaseOffset = core.configuration.databaseClock.seconds
        // Read after the authorization above, which may have waited for a token.
        let startingAt = monotonicNanoseconds()
        for (i, request) in work.enumerated() {
            if let deadline = request.startDeadline, startingAt >= deadline {
                // Waited so long for a stream that the caller's lease could run out before an
                // answer: never started, handed back (another claim may take the row then).
                var response = PushResponse(request: request)
                response.deadlinePassed = true
                results.append(response)
                continue
            }
            if SendTimeExpiry.hasPassed(expiration: request.expiration, hostNow: nowSeconds, databaseOffset: databaseOffset) {
                // Waited past its expires_at (by the database's clock) for a stream: never sent
                // late (0 is APNs' "do not store").
                var response = PushResponse(request: request)
                response.expiredBeforeSending = true
                results.append(response)
                continue
            }
            guard let slot = freeSlot() else {
                requeue(Array(work[i...]))
                break
            }
            if let failure = load(request, into: slot, token: token) {
                results.append(PushResponse(request: request, transportFailure: failure))
                freeSlots.append(slot)
            }
        }
    }

    /// Writes `request` into `slot` and adds it to the multi handle.
    ///
    /// - Returns: nil once it is in flight, or why it cannot be sent (the slot is then free again).
    private func load(_ request: PushRequest, into slot: StreamSlot, token: BearerToken?) -> TransportFailure? {
        if slot.tokenSerial != (token?.serial ?? 0), !slot.setAuthorization(token) {
            // The authorizer hands out only tokens that fit (``StreamLayout/fits(_:)``).
            return TransportFailure(kind: .signingFailed, message: "the bearer token does not fit its authorization header")
        }
        if let failure = slot.load(request, for: provider) {
            slot.request = nil
            return failure
        }
        let rc = multi.add(slot.easy)
        guard rc == CURLM_OK else {
            slot.request = nil
            return TransportFailure(kind: .other, code: Int32(rc.rawValue), message: "curl_multi_add_handle: \(curlMessage(rc))")
        }
        inFlight += 1
        return nil
    }

    /// A free stream, built if there is none; nil if one cannot be built (out of memory: the
    /// window shrinks to the streams there are).
    private func freeSlot() -> StreamSlot? {
        if let reused = freeSlots.popLast() { return reused }
        do {
            let slot = try makeSlot()
            allSlots.append(slot)
            return slot
        } catch {
            // The first slot was built at start with the same settings, so this is a lack of
            // memory: carry on with the slots there are.
            window = max(1, allSlots.count)
            logger.error("cannot build another stream; this connection keeps fewer in flight",
                         metadata: [LogKey.streams: "\(window)", "error": "\(error)"])
            return nil
        }
    }

    /// Puts requests this connection took but cannot start back at the head of the sender's
    /// queue, or reports them as never sent once it is shutting down.
    private func requeue(_ requests: [PushRequest]) {
        if !core.state.withLock({ $0.requeue(requests) }) {
            fail(requests, TransportFailure(kind: .cancelled, message: "the sender shut down before a stream came free"))
        }
    }

    /// Hands back unsent (``PushResponse/laneStopped``) the requests of `work` whose lane
    /// `stops` names, and returns the others: one set look-up per request, only while a lane is
    /// stopped.
    private func handBackStopped(_ work: [PushRequest], _ stops: LaneStops) -> [PushRequest] {
        var going: [PushRequest] = []
        going.reserveCapacity(work.count)
        for request in work {
            guard stops.stops(request.lane) else {
                going.append(request)
                continue
            }
            var response = PushResponse(request: request)
            response.laneStopped = true
            results.append(response)
        }
        return going
    }

    /// Answers the requests the provider says cannot be sent as they are
    /// (``PushProvider/problem(with:)``) with `invalidHeader` before anything else happens to
    /// the batch (no token, no connection), and returns the others. The common case, every
    /// request sendable, reads each once and allocates nothing.
    private func refuseUnsendable(_ work: [PushRequest]) -> [PushRequest] {
        guard let first = work.firstIndex(where: { provider.problem(with: $0) != nil }) else { return work }
        var valid = Array(work[..<first])
        valid.reserveCapacity(work.count)
        for request in work[first...] {
            if let problem = provider.problem(with: request) {
                results.append(PushResponse(request: request, transportFailure: TransportFailure(kind: .invalidHeader, message: problem)))
            } else {
                valid.append(request)
            }
        }
        return valid
    }

    /// Answers every request of a batch its authorizer refused.
    private func refuse(_ requests: [PushRequest], _ refusal: Refusal) {
        switch refusal {
        case .failure(let failure):
            fail(requests, failure)
        case .verdict(let answer):
            for request in requests { results.append(PushResponse(request: request, answer: answer)) }
        }
    }

    /// Reports `requests` as failed with `failure` without sending them.
    func fail(_ requests: [PushRequest], _ failure: TransportFailure) {
        for request in requests { results.append(PushResponse(request: request, transportFailure: failure)) }
    }
}
