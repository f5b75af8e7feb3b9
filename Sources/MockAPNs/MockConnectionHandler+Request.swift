import NIOCore
import NIOHPACK
import NIOHTTP2
import PushCore
import Synchronization

/// One complete request: validate, decide (answer-all, rules, random failures), count, answer.
extension MockConnectionHandler {
    /// What validation concluded about one request.
    struct Verdict {
        var deviceToken: Substring?
        var reason: APNsReason?
        var auth = "none"
        var jwt: VerifiedJWT?
        var switched = false
        var violation: ConnectionTokenState.Violation?
    }

    func completeRequest(context: ChannelHandlerContext, streamID: HTTP2StreamID, headers: HPACKHeaders, body: ByteBuffer?) {
        let head = RequestHead(headers)
        if head.isControl {
            handleControl(context: context, streamID: streamID, head: head, body: body)
            return
        }
        if isFCMPath(head) {
            handleFCM(context: context, streamID: streamID, head: head, headers: headers, body: body)
            return
        }
        requestsCompleted += 1
        if streamID > highestCompletedStreamID { highestCompletedStreamID = streamID }
        let verdict = validate(head: head, body: body, context: context)
        let apnsID = head.apnsID.flatMap { RequestValidator.isCanonicalLowercaseUUID($0) ? $0 : nil } ?? rng.uuidString()

        let receivedMonotonic = MockClock.monotonicNanoseconds()
        let connectionID = self.connectionID
        let (answer, waiters, faults) = core.state.withLock { state -> (MockAnswer, [MockSharedState.Waiter], MockConnectionFaults) in
            let answer: MockAnswer
            if let reason = verdict.reason {
                answer = .error(reason)
            } else {
                answer = state.answer(forValidToken: verdict.deviceToken!)
            }
            switch verdict.auth {
            case "token": state.stats.tokenAuthRequests += 1
            case "certificate": state.stats.certificateAuthRequests += 1
            default: break
            }
            if verdict.switched { state.stats.tokenSwitches += 1 }
            switch verdict.violation {
            case .switchTooSoon: state.stats.tokenSwitchViolations += 1
            case .keyIDChanged: state.stats.keyIDChanges += 1
            case nil: break
            }
            let status: Int?
            switch answer.kind {
            case .normal: status = 200
            case .status: status = answer.status ?? 200
            case .noAnswer, .reset: status = nil
            }
            let recordBodies = state.recordBodies
            let waiters = state.count(
                connectionID: connectionID, status: status, reason: answer.reason, kind: answer.kind
            ) {
                Self.record(
                    connectionID: connectionID, streamID: streamID, head: head, headers: headers,
                    body: body, keepBody: recordBodies, verdict: verdict, answer: answer, status: status,
                    apnsID: apnsID, receivedMonotonic: receivedMonotonic
                )
            }
            return (answer, waiters, state.faults)
        }
        for waiter in waiters { waiter.notify(true) }

        let succeeded = answer.kind == .normal || (answer.kind == .status && (answer.status ?? 200) == 200)
        if streamsLimited, succeeded, verdict.reason == nil {
            streamsLimited = false
            let raised = HTTP2Setting(parameter: .maxConcurrentStreams, value: core.configuration.maxConcurrentStreams)
            write(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings([raised]))), context: context)
        }
        deliver(answer, streamID: streamID, apnsID: apnsID, context: context)
        applyConnectionFaults(faults, context: context)
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
                return verdict
            }
        } else if hasVerifiedClientCertificate(context: context) {
            verdict.auth = "certificate"
        } else {
            verdict.reason = .missingProviderToken
            return verdict
        }
        switch core.validator.checkHeaders(head, certificateAuth: verdict.auth == "certificate") {
        case .failure(let reason):
            verdict.reason = reason
        case .success(let pushType):
            let view = body?.readableBytesView ?? ByteBuffer().readableBytesView
            verdict.reason = RequestValidator.checkBody(view, pushType: pushType)
        }
        return verdict
    }

    /// Writes the answer now, or schedules it when delayed; `noAnswer` writes nothing.
    private func deliver(_ answer: MockAnswer, streamID: HTTP2StreamID, apnsID: String, context: ChannelHandlerContext) {
        if answer.kind == .noAnswer { return }
        let delay = answer.delayMilliseconds ?? 0
        guard delay > 0 else {
            writeAnswer(answer, streamID: streamID, apnsID: apnsID, context: context)
            return
        }
        delayedAnswers += 1
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(delay))) {
            self.delayedAnswers -= 1
            guard context.channel.isActive else { return }
            self.writeAnswer(answer, streamID: streamID, apnsID: apnsID, context: context)
            self.needsFlush = false
            context.flush()
            self.finishGoawayIfDone(context: context)
        }
    }

    private func writeAnswer(_ answer: MockAnswer, streamID: HTTP2StreamID, apnsID: String, context: ChannelHandlerContext) {
        let uniqueID = core.configuration.environment == .development ? rng.uuidString() : nil
        switch answer.kind {
        case .noAnswer:
            return
        case .reset:
            write(HTTP2Frame(streamID: streamID, payload: .rstStream(.internalError)), context: context)
        case .normal:
            write(Responses.success(streamID: streamID, apnsID: apnsID, uniqueID: uniqueID), context: context)
        case .status:
            let status = answer.status ?? 200
            if status == 200 && answer.reason == nil && answer.timestamp == nil {
                write(Responses.success(streamID: streamID, apnsID: apnsID, uniqueID: uniqueID), context: context)
                return
            }
            let (headers, data) = Responses.json(
                streamID: streamID, status: status,
                body: Responses.reasonBody(answer.reason, timestamp: answer.timestamp),
                apnsID: apnsID, uniqueID: uniqueID, allocator: context.channel.allocator
            )
            write(headers, context: context)
            write(data, context: context)
        }
    }
}
