import NIOCore
import NIOHPACK
import NIOHTTP2
import Synchronization

/// One complete request: validate, decide (answer-all, rules, random failures), count, answer.
extension MockConnectionHandler {
    /// What validation concluded about one request.
    struct Verdict {
        var deviceToken: Substring?
        var reason: MockAPNsReason?
        var auth = "none"
        var jwt: VerifiedJWT?
        var switched = false
        var violation: ConnectionTokenState.Violation?
    }

    func completeRequest(context: ChannelHandlerContext, streamID: HTTP2StreamID, headers: HPACKHeaders, body: ByteBuffer?) {
        let head = RequestHead(headers)
        if listener.role == .management {
            handleChannelRequest(context: context, streamID: streamID, head: head, headers: headers, body: body)
            return
        }
        if head.isControl {
            handleControl(context: context, streamID: streamID, head: head, body: body)
            return
        }
        if isFCMPath(head) {
            handleFCM(context: context, streamID: streamID, head: head, headers: headers, body: body)
            return
        }
        if isWebPushPath(head) {
            handleWebPush(context: context, streamID: streamID, head: head, headers: headers, body: body)
            return
        }
        requestsCompleted += 1
        if streamID > highestCompletedStreamID { highestCompletedStreamID = streamID }
        let broadcast = Self.isBroadcastPath(head)
        let verdict = broadcast ? validateBroadcast(head: head, body: body, context: context) : validate(head: head, body: body, context: context)
        let id = broadcast ? head.requestID : head.apnsID
        let apnsID = id.flatMap { MockAPNsRules.isValidApnsID($0) ? $0 : nil } ?? rng.uuidString()
        let (answer, faults) = decide(verdict, streamID: streamID, head: head, headers: headers, body: body, apnsID: apnsID,
                                      broadcast: broadcast)
        if streamsLimited, answer.decidedStatus == 200, verdict.reason == nil {
            streamsLimited = false
            let raised = HTTP2Setting(parameter: .maxConcurrentStreams, value: core.configuration.maxConcurrentStreams)
            write(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([raised]))), context: context)
        }
        deliver(answer, streamID: streamID, apnsID: apnsID, idHeader: broadcast ? "apns-request-id" : "apns-id", context: context)
        applyConnectionFaults(faults, context: context)
    }

    /// Decides the answer and counts the request (and records it) under the server's lock, then
    /// wakes the waiters whose condition now holds. Returns the answer and the faults in force.
    private func decide(
        _ verdict: Verdict, streamID: HTTP2StreamID, head: RequestHead, headers: HPACKHeaders, body: ByteBuffer?, apnsID: String,
        broadcast: Bool
    ) -> (MockAnswer, MockConnectionFaults) {
        let receivedMonotonic = MockClock.monotonicNanoseconds()
        let connectionID = self.connectionID
        let (answer, waiters, faults) = core.state.withLock { state -> (MockAnswer, [MockSharedState.Waiter], MockConnectionFaults) in
            let answer = verdict.reason.map { MockAnswer.error($0) } ?? state.answer(forValidToken: verdict.deviceToken!)
            state.countAuthentication(auth: verdict.auth, switched: verdict.switched, violation: verdict.violation)
            if broadcast { state.stats.broadcasts += 1 }
            let recordBodies = state.recordBodies
            let waiters = state.count(connectionID: connectionID, status: answer.decidedStatus, reason: answer.reason, kind: answer.kind) {
                Self.record(
                    connectionID: connectionID, streamID: streamID, head: head, headers: headers,
                    body: body, keepBody: recordBodies, verdict: verdict, answer: answer, status: answer.decidedStatus,
                    apnsID: apnsID, receivedMonotonic: receivedMonotonic
                )
            }
            return (answer, waiters, state.faults)
        }
        for waiter in waiters { waiter.notify(true) }
        return (answer, faults)
    }

    private func validate(head: RequestHead, body: ByteBuffer?, context: ChannelHandlerContext) -> Verdict {
        var verdict = Verdict()
        switch RequestValidator.checkPath(head) {
        case .failure(let reason):
            verdict.reason = reason
            return verdict
        case .success(let token):
            verdict.deviceToken = token
        }
        guard authenticate(head: head, context: context, into: &verdict) else { return verdict }
        switch core.validator.checkHeaders(head, certificateAuth: verdict.auth == "certificate") {
        case .failure(let reason):
            verdict.reason = reason
        case .success(let pushType):
            let view = body?.readableBytesView ?? ByteBuffer().readableBytesView
            verdict.reason = RequestValidator.checkBody(view, pushType: pushType)
            if verdict.reason == nil, pushType == .liveactivity,
               MockLiveActivityRules.problem(Array(view), broadcast: false) != nil {
                verdict.reason = .invalidLiveActivityPayload
            }
        }
        return verdict
    }

    /// Checks the provider token (or the client certificate) into `verdict`; false, with the
    /// verdict's reason set, when the request is not authenticated.
    func authenticate(head: RequestHead, context: ChannelHandlerContext, into verdict: inout Verdict) -> Bool {
        if let authorization = head.authorization {
            let maxAge = core.tokenMaxAgeSeconds.load(ordering: .relaxed)
            switch tokenState.admit(authorization: authorization, now: core.now(), maxAgeSeconds: maxAge, verifier: core.verifier) {
            case .accepted(let jwt, let switched):
                verdict.auth = "token"
                verdict.jwt = jwt
                verdict.switched = switched
            case .rejected(let reason, let violation):
                verdict.reason = reason
                verdict.violation = violation
                return false
            }
        } else if hasVerifiedClientCertificate(context: context) {
            verdict.auth = "certificate"
        } else {
            verdict.reason = .missingProviderToken
            return false
        }
        return true
    }

    /// Writes the answer now, or schedules it when delayed; `noAnswer` writes nothing.
    /// `idHeader` carries `apnsID`: `apns-id`, or `apns-request-id` for a broadcast.
    func deliver(_ answer: MockAnswer, streamID: HTTP2StreamID, apnsID: String, idHeader: String, context: ChannelHandlerContext) {
        if answer.kind == .noAnswer { return }
        if core.heldAnswers.isHolding, park(answer, streamID: streamID, apnsID: apnsID, idHeader: idHeader, context: context) { return }
        let delay = answer.delayMilliseconds ?? 0
        guard delay > 0 else {
            writeAnswer(answer, streamID: streamID, apnsID: apnsID, idHeader: idHeader, context: context)
            return
        }
        delayedAnswers += 1
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay))) {
            self.delayedAnswers -= 1
            guard context.channel.isActive else { return }
            self.writeAnswer(answer, streamID: streamID, apnsID: apnsID, idHeader: idHeader, context: context)
            self.needsFlush = false
            context.flush()
            self.finishGoawayIfDone(context: context)
        }
    }

    private func writeAnswer(_ answer: MockAnswer, streamID: HTTP2StreamID, apnsID: String, idHeader: String, context: ChannelHandlerContext) {
        let uniqueID = core.configuration.environment == .development ? rng.uuidString() : nil
        switch answer.kind {
        case .noAnswer:
            return
        case .reset:
            write(HTTP2Frame(streamID: streamID, payload: .rstStream(.internalError)), context: context)
        case .normal:
            write(Responses.success(streamID: streamID, apnsID: apnsID, uniqueID: uniqueID, idHeader: idHeader), context: context)
        case .status:
            let status = answer.status ?? 200
            if status == 200 && answer.reason == nil && answer.timestamp == nil {
                write(Responses.success(streamID: streamID, apnsID: apnsID, uniqueID: uniqueID, idHeader: idHeader), context: context)
                return
            }
            let (headers, data) = Responses.json(
                streamID: streamID, status: status,
                body: Responses.reasonBody(answer.reason, timestamp: answer.timestamp),
                apnsID: apnsID, uniqueID: uniqueID, idHeader: idHeader, allocator: context.channel.allocator
            )
            write(headers, context: context)
            write(data, context: context)
        }
    }
}
