import CCurl
import Foundation
import Logging
import PushCore

/// One HTTP/2 connection to APNs, driven by its own thread.
///
/// The connection is a `CURLM*` limited to one host connection, so every stream it carries
/// uses the provider token pinned here, and its in-flight count is exact. Its thread (a
/// Foundation `Thread`, never Swift's cooperative pool) loops: take work from the sender in
/// one batch, load it into pooled easy handles, `curl_multi_perform`, collect answers and hand
/// them to `onResults` in one batch, then `curl_multi_poll` until a socket, a timer or
/// `curl_multi_wakeup` (from `submit`/`shutdown`) wakes it.
///
/// A connection of an FCM sender works the same way, but takes an access token from the
/// ``FCMAccessTokenProvider`` per batch (blocking this thread while no token is usable) and
/// resends at once, through the sender's queue, a request FCM answered 401 UNAUTHENTICATED,
/// after dropping its token once.
///
/// "Reopening" replaces the multi handle once nothing is in flight: `curl_multi_cleanup`
/// closes the old connection and the next transfer opens a new one with the newest token.
/// Every multi handle is cleaned up on this thread (see `WakeTarget`).
///
/// The first stream slot is built in `init`, so a libcurl option the installed library
/// refuses (the CA blob, the client certificate settings) fails ``APNsSender``'s `init`
/// instead of every request.
///
/// `@unchecked Sendable`: the connection is built by `APNsSender.init`, then handed to
/// exactly one thread by `APNsSender.start()`; from then on only that thread touches its
/// mutable state. The sender keeps the reference only to read the immutable `index`.
/// Other threads reach the connection solely through `SenderCore` (a `Mutex`) and
/// `WakeTarget` (`curl_multi_wakeup`, documented thread-safe).
final class APNsConnection: @unchecked Sendable {
    let index: Int
    private let core: SenderCore
    /// Streams this connection keeps in flight; lowered if a slot cannot be built (out of memory).
    private var window: Int
    /// Nil only after the thread finished (the connection is then closed).
    private var multi: CurlMulti!
    /// Every slot ever created, and the free ones; slots are reused for the thread's lifetime.
    private var allSlots: [StreamSlot] = []
    private var freeSlots: [StreamSlot] = []
    private var inFlight = 0
    private var token: ProviderTokenManager.Token?
    /// Whether the current multi has carried a request (an idle, unused one needs no reopening).
    private var multiUsed = false
    /// TCP connections libcurl opened on the current multi handle. More than one means
    /// libcurl reconnected by itself (after GOAWAY or a drop) with the token pinned for the
    /// old connection; the multi is then replaced so the new connection takes the newest token.
    private var connectsOnMulti = 0
    private var needsReopen = false
    /// Whether ``SenderState``'s `stats.openConnections` counts this connection.
    private var countedOpen = false
    private var reopenReason = ""
    private var lastActivity: Int64 = 0
    private var notBefore: Int64 = 0
    private var results: [APNsResponse] = []
    /// FCM: the newest access-token serial FCM accepted (a 200) on this connection.
    private var fcmAcceptedSerial = 0
    private var logger: Logger

    init(index: Int, core: SenderCore) throws {
        self.index = index
        self.core = core
        self.window = core.configuration.streamsPerConnection
        self.multi = try CurlMulti(maxConcurrentStreams: core.configuration.maxConcurrentStreams)
        var logger = core.logger
        logger[metadataKey: "apns.connection"] = "\(index)"
        self.logger = logger
        let first = try StreamSlot(template: core.template)
        allSlots.append(first)
        freeSlots.append(first)
        core.wakeTargets[index].set(multi)
    }

    /// The thread body; returns when the sender has shut down.
    func run(startedAt: Int64) {
        notBefore = startedAt + Int64(Double(index) * core.configuration.connectionStagger * 1e9)
        defer { finishThread() }
        while true {
            let now = monotonicNanoseconds()
            let want = !needsReopen && now >= notBefore ? window - inFlight : 0
            let answered = results.count
            // One lock per iteration: count the answers about to be delivered (so `freeSlots`
            // is exact when `onResults` runs: a worker claims more from there) and take new work.
            let (phase, work) = core.state.withLock { s in
                s.inFlight -= answered
                s.stats.answered += answered
                return s.exchange(want: want)
            }
            if answered > 0 {
                let batch = results
                results = []
                results.reserveCapacity(batch.count)
                core.onResults(batch)
            }
            if case .stopping(let deadline) = phase {
                if inFlight == 0 { return }
                if now >= deadline { cancelInFlight(); return }
            }
            if phase == .stopped { return }
            if !work.isEmpty { start(work, now: now) }

            let (rc, _) = multi.perform()
            if rc != CURLM_OK { logger.error("curl_multi_perform failed", metadata: ["curl.error": "\(curlMessage(rc))"]) }
            let resent = collectAnswers()
            if needsReopen, inFlight == 0 { reopen() }
            if !results.isEmpty || resent { continue }  // deliver them and take more work before sleeping
            var timeout: Int64 = 1000
            if now < notBefore { timeout = min(timeout, (notBefore - now) / 1_000_000 + 1) }
            if case .stopping(let deadline) = phase { timeout = min(timeout, max(0, (deadline - now) / 1_000_000 + 1)) }
            let prc = multi.poll(timeoutMilliseconds: Int32(timeout))
            if prc != CURLM_OK { logger.error("curl_multi_poll failed", metadata: ["curl.error": "\(curlMessage(prc))"]) }
        }
    }

    private func start(_ work: [APNsRequest], now: Int64) {
        let work = core.provider == .apns ? refuseInvalidHeaders(work) : work
        guard !work.isEmpty else { return }
        if multiUsed, inFlight == 0, Double(now - lastActivity) / 1e9 > core.configuration.idleReopenAfter {
            needsReopen = true
            reopenReason = "idle"
            reopen()
        }
        lastActivity = now
        // Pin or refresh the provider token once per batch.
        var currentToken: ProviderTokenManager.Token? = nil
        var accessToken: FCMAccessToken? = nil
        if let fcm = core.fcm {
            // Once per batch; blocks this thread only when no token is usable (first use, after
            // a 401, or a refresh ahead of expiry that has not finished in time).
            do throws(FCMTransportError) {
                accessToken = try fcm.accessTokenBlocking()
            } catch {
                failWithoutAccessToken(work, error)
                return
            }
        } else if case .token(let manager)? = core.credential {
            do {
                if let held = token {
                    let next = try manager.refresh(held)
                    if next != held {
                        core.state.withLock { $0.stats.tokenSwitches += 1 }
                        logger.info("switching provider token", metadata: ["apns.token.age": "\(manager.now() - held.issuedAt)s"])
                    }
                    token = next
                } else {
                    token = try manager.newest()
                }
                currentToken = token
            } catch {
                // The credential's problem, not the notifications': `signingFailed` pauses it.
                logger.error("cannot sign a provider token", metadata: ["error": "\(error)"])
                fail(work, TransportFailure(kind: .signingFailed, message: "cannot sign a provider token: \(error)"))
                return
            }
        }
        if !multiUsed, let failure = core.template.certificateFailure(now: Int64(time(nil))) {
            // Checked before each new connection: an expired certificate pauses the credential
            // with a message saying so, instead of failing TLS handshakes.
            logger.error("cannot use the APNs client certificate", metadata: ["error": "\(failure.message)"])
            fail(work, failure)
            return
        }
        multiUsed = true
        let nowSeconds = Int64(time(nil))
        let databaseOffset = core.configuration.databaseClock.seconds
        // Read after the token above, which may have waited for an exchange.
        let startingAt = monotonicNanoseconds()
        for (i, request) in work.enumerated() {
            if let deadline = request.startDeadline, startingAt >= deadline {
                // Waited so long for a stream that the caller's lease could run out before an
                // answer: never started, handed back (another claim may take the row then).
                var response = emptyResponse(for: request)
                response.deadlinePassed = true
                results.append(response)
                continue
            }
            if SendTimeExpiry.hasPassed(expiration: request.expiration, hostNow: nowSeconds, databaseOffset: databaseOffset) {
                // Waited past its expires_at (by the database's clock) for a stream: never sent
                // late (0 is APNs' "do not store").
                var response = emptyResponse(for: request)
                response.expiredBeforeSending = true
                results.append(response)
                continue
            }
            let slot: StreamSlot
            if let reused = freeSlots.popLast() {
                slot = reused
            } else {
                do {
                    slot = try StreamSlot(template: core.template)
                    allSlots.append(slot)
                } catch {
                    // The first slot was built at start with the same settings, so this is a
                    // lack of memory: carry on with the slots there are; the rest go back to the queue.
                    window = max(1, allSlots.count)
                    logger.error("cannot build another stream; this connection keeps fewer in flight",
                                 metadata: ["apns.streams": "\(window)", "error": "\(error)"])
                    let rest = Array(work[i...])
                    if !core.state.withLock({ $0.requeue(rest) }) {
                        fail(rest, TransportFailure(kind: .cancelled, message: "the sender shut down before a stream came free"))
                    }
                    break
                }
            }
            if let accessToken {
                if slot.tokenSerial != accessToken.serial, !slot.setBearer(accessToken) {
                    var response = emptyResponse(for: request)
                    response.fcmCredentialVerdict = .pauseCredential(.unauthenticated, message: "the FCM access token granted for \(core.fcm!.account) does not fit an authorization header (more than 4096 bytes)")
                    results.append(response)
                    freeSlots.append(slot)
                    continue
                }
            } else if slot.tokenSerial != (currentToken?.serial ?? 0), !slot.setAuthorization(currentToken) {
                var response = emptyResponse(for: request)
                response.transportFailure = TransportFailure(kind: .signingFailed, message: "the provider token does not fit its authorization header")
                results.append(response)
                freeSlots.append(slot)
                continue
            }
            if let failure = slot.load(request) {
                slot.request = nil
                var response = emptyResponse(for: request)
                response.transportFailure = failure
                results.append(response)
                freeSlots.append(slot)
                continue
            }
            let rc = multi.add(slot.easy)
            guard rc == CURLM_OK else {
                slot.request = nil
                var response = emptyResponse(for: request)
                response.transportFailure = TransportFailure(kind: .other, code: Int32(rc.rawValue), message: "curl_multi_add_handle: \(curlMessage(rc))")
                results.append(response)
                freeSlots.append(slot)
                continue
            }
            inFlight += 1
        }
    }

    /// Answers the requests whose headers cannot be sent (``APNsRequest/headerProblem``) with
    /// `invalidHeader` before anything else happens to the batch (no token, no connection),
    /// and returns the others. The common case, every request valid, reads each once and
    /// allocates nothing.
    /// FCM requests carry none of these headers (their token is in the body, checked by
    /// `FCMMessageBody.build`): they pass as they are.
    private func refuseInvalidHeaders(_ work: [APNsRequest]) -> [APNsRequest] {
        guard core.provider == .apns, work.contains(where: { $0.headerProblem != nil }) else { return work }
        var valid: [APNsRequest] = []
        valid.reserveCapacity(work.count)
        for request in work {
            if let problem = request.headerProblem {
                var response = emptyResponse(for: request)
                response.transportFailure = TransportFailure(kind: .invalidHeader, message: problem)
                results.append(response)
            } else {
                valid.append(request)
            }
        }
        return valid
    }

    /// A response to `request` from this connection's service, with nothing in it yet.
    private func emptyResponse(for request: APNsRequest) -> APNsResponse {
        var response = APNsResponse(request: request)
        response.provider = core.provider
        return response
    }

    /// Reports `requests` as not sent for want of an FCM access token: a refusal that will
    /// not pass by itself pauses the credential with a message saying what to fix; an
    /// unreachable token endpoint is a connection failure (nothing was delivered).
    private func failWithoutAccessToken(_ requests: [APNsRequest], _ error: FCMTransportError) {
        logger.error("no FCM access token", metadata: ["error": "\(error)"])
        if error.isTransient {
            fail(requests, TransportFailure(kind: .connect, message: "cannot get an FCM access token: \(error)"))
            return
        }
        let verdict = error.refusal.map(FCMVerdict.tokenRefused) ?? .pauseCredential(.unauthenticated, message: error.message)
        for request in requests {
            var response = emptyResponse(for: request)
            response.fcmCredentialVerdict = verdict
            results.append(response)
        }
    }

    /// Reports `requests` as failed with `failure` without sending them.
    private func fail(_ requests: [APNsRequest], _ failure: TransportFailure) {
        for request in requests {
            var response = emptyResponse(for: request)
            response.transportFailure = failure
            results.append(response)
        }
    }

    /// Collects finished transfers into `results`, except FCM 401s resent with a new access
    /// token; returns whether any were resent (they wait in the sender's queue).
    private func collectAnswers() -> Bool {
        var newConnections = 0
        var resend: [APNsRequest] = []
        multi.forEachDone { done in
            let slot: StreamSlot
            if let pointer = done.privatePointer {
                slot = Unmanaged<StreamSlot>.fromOpaque(pointer).takeUnretainedValue()
            } else {
                // CURLINFO_PRIVATE failed: find the slot by its handle so it is freed and answered.
                logger.error("curl_easy_getinfo(CURLINFO_PRIVATE) failed", metadata: ["curl.error": "\(curlMessage(done.privateResult))"])
                guard let found = allSlots.first(where: { $0.easy.handle == done.easy }) else { return }
                slot = found
            }
            let removed = multi.remove(slot.easy)
            inFlight -= 1
            newConnections += slot.easy.connectsMade()
            let serial = slot.tokenSerial
            let result = done.result
            defer {
                if removed == CURLM_OK {
                    freeSlots.append(slot)
                } else {
                    // Still attached for all we know: drop the slot; curl_easy_cleanup detaches it.
                    logger.error("curl_multi_remove_handle failed; dropping the stream", metadata: ["curl.error": "\(curlMessage(removed))"])
                    allSlots.removeAll { $0 === slot }
                }
            }
            if var response = slot.finish(result: result) {
                if serial != 0, case .token(let manager)? = core.credential {
                    response.token = TokenUse(serial: serial, ageSeconds: manager.now() - slot.tokenIssuedAt)
                }
                if core.provider == .fcm, let status = response.status {
                    if status == 200, serial > fcmAcceptedSerial { fcmAcceptedSerial = serial }
                    if status >= 500 { act(on: .reopen, reason: nil, tokenSerial: 0) }
                    if response.outcome == .fcm(.refreshAccessToken), let request = resendAfter401(&response, token: slot.fcmToken) {
                        resend.append(request)
                        return
                    }
                } else if let status = response.status {
                    act(on: ConnectionAction.forAnswer(status: status, reason: response.reason), reason: response.reason, tokenSerial: serial)
                } else if let failure = response.transportFailure,
                          [.connectionLost, .connect, .tls].contains(failure.kind), !needsReopen {
                    needsReopen = true
                    reopenReason = "connection lost: \(failure.message)"
                    if failure.kind == .connectionLost { core.state.withLock { $0.stats.connectionsEndedByServer += 1 } }
                }
                results.append(response)
            }
        }
        if !resend.isEmpty, !core.state.withLock({ $0.requeue(resend) }) {
            // Shutting down: report the 401s (`.refreshAccessToken`: no attempt counted).
            for request in resend {
                var response = emptyResponse(for: request)
                response.status = 401
                response.fcmError = FCMErrorBody(code: .unauthenticated, message: nil)
                results.append(response)
            }
        }
        connectsOnMulti += newConnections
        var endedByServer = 0
        if connectsOnMulti > 1, !needsReopen {
            needsReopen = true
            reopenReason = "libcurl reconnected"
            endedByServer = 1
        }
        if newConnections > 0 {
            let opened = !countedOpen
            countedOpen = true
            core.state.withLock { s in
                s.stats.connectionsOpened += newConnections
                s.stats.connectionsEndedByServer += endedByServer
                if opened { s.stats.openConnections += 1 }
            }
            logger.debug("opened connection", metadata: ["apns.connections.new": "\(newConnections)"])
        }
        return !resend.isEmpty
    }

    /// After FCM answered 401 UNAUTHENTICATED to a request sent with `token`: drops the token
    /// once (requests in flight with it at the same time find it replaced already) and returns
    /// the request to resend at once, or nil to report `response`, which then says to pause
    /// the credential if a freshly granted token was refused too.
    private func resendAfter401(_ response: inout APNsResponse, token: FCMAccessToken?) -> APNsRequest? {
        guard let fcm = core.fcm, let token, response.request.fcmResends < 2 else { return nil }
        switch fcm.invalidate(token) {
        case .dropped, .alreadyReplaced:
            var request = response.request
            request.fcmResends += 1
            return request
        case .rejectedAgain where token.serial <= fcmAcceptedSerial:
            // Fetched after a 401, but FCM accepted it before refusing it now (revoked or
            // expired since): a new token may work, as after any first 401.
            var request = response.request
            request.fcmResends += 1
            return request
        case .rejectedAgain:
            response.fcmCredentialVerdict = .pauseCredential(.unauthenticated, message: "FCM refused (401 UNAUTHENTICATED) an access token just granted for \(fcm.account): check that the service account is enabled and that the Firebase Cloud Messaging API is enabled for project \(fcm.account.projectID)")
            return nil
        }
    }

    private func act(on action: ConnectionAction, reason: APNsReason?, tokenSerial: Int) {
        switch action {
        case .keep:
            return
        case .renewTokenAndReopen:
            if case .token(let manager)? = core.credential, !needsReopen {
                do {
                    _ = try manager.renew(afterSerial: tokenSerial)
                } catch {
                    logger.error("cannot renew the provider token", metadata: ["error": "\(error)"])
                }
            }
            fallthrough
        case .reopen:
            if !needsReopen {
                needsReopen = true
                reopenReason = reason?.rawValue ?? "server error"
            }
        }
    }

    /// Replaces the multi handle (closing the connection); the next request opens a new one
    /// and takes the newest token.
    private func reopen() {
        guard inFlight == 0 else { return }
        do {
            let fresh = try CurlMulti(maxConcurrentStreams: core.configuration.maxConcurrentStreams)
            core.wakeTargets[index].set(fresh)
            closeMulti()
            multi = fresh
            token = nil
            multiUsed = false
            connectsOnMulti = 0
            needsReopen = false
            let wasOpen = countedOpen
            countedOpen = false
            core.state.withLock { s in
                s.stats.reopens += 1
                if wasOpen { s.stats.openConnections -= 1 }
            }
            logger.info("reopening connection", metadata: ["apns.reason": "\(reopenReason)"])
        } catch {
            logger.error("cannot create a new connection handle", metadata: ["error": "\(error)"])
        }
    }

    private func cancelInFlight() {
        for slot in allSlots where slot.request != nil {
            let rc = multi.remove(slot.easy)
            if rc != CURLM_OK {
                logger.error("curl_multi_remove_handle failed at shutdown", metadata: ["curl.error": "\(curlMessage(rc))"])
            }
            if let response = slot.cancel("the sender shut down before APNs answered") { results.append(response) }
            inFlight -= 1
        }
        freeSlots = allSlots
    }

    /// `curl_multi_cleanup` of the current multi, on this thread (its wake target no longer points at it).
    private func closeMulti() {
        let rc = multi.close()
        if rc != CURLM_OK {
            logger.error("curl_multi_cleanup failed", metadata: ["curl.error": "\(curlMessage(rc))"])
        }
    }

    private func finishThread() {
        if !results.isEmpty {
            let batch = results
            results = []
            core.onResults(batch)
            core.state.withLock { $0.inFlight -= batch.count; $0.stats.answered += batch.count }
        }
        if countedOpen {
            countedOpen = false
            core.state.withLock { $0.stats.openConnections -= 1 }
        }
        // On this thread, in ownership order: no other thread can wake the multi any more;
        // the easy handles (all detached) are cleaned up, then the multi, closing the connection.
        core.wakeTargets[index].set(nil)
        freeSlots = []
        allSlots = []
        closeMulti()
        multi = nil
        core.threadExited()
    }
}
