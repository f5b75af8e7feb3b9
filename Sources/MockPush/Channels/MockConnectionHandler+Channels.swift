import NIOCore
import NIOHPACK
import NIOHTTP2

/// APNs' channel-management API, served on the management listener's connections only.
///
/// Apple, "Sending channel management requests to APNs": `POST /1/apps/<bundle>/channels`
/// with `{"message-storage-policy":0|1,"push-type":"LiveActivity"}` creates a channel (201,
/// its id in `apns-channel-id`); `GET` and `DELETE` of the same path with `apns-channel-id`
/// read it (200, the same JSON) and delete it (204); `GET /1/apps/<bundle>/all-channels` lists
/// the ids (200, `{"channels":[…]}`). Every answer carries `apns-request-id`. Requests
/// authenticate as pushes do. Where Apple's documentation is silent, the mock's reading: an
/// unknown channel is 400 `ChannelNotRegistered`, a bundle id the mock was not given is 400
/// `TopicDisallowed`, a create body that is not a JSON object is `PayloadEmpty`, a storage
/// policy other than 0 or 1 is 400 `BadMessageStoragePolicy`.
extension MockConnectionHandler {
    /// What one management request gets: status, reason, the created channel, the JSON body.
    struct ChannelResult {
        var status: Int
        var reason: String?
        var channelID: String?
        var json: String?
        var kind: MockAnswer.Kind = .status

        static func error(_ reason: MockAPNsReason) -> ChannelResult {
            ChannelResult(status: reason.status, reason: reason.rawValue)
        }
    }

    func handleChannelRequest(context: ChannelHandlerContext, streamID: HTTP2StreamID, head: RequestHead, headers: HPACKHeaders, body: ByteBuffer?) {
        var verdict = Verdict()
        let route = Self.channelRoute(head)
        var result: ChannelResult?
        switch route {
        case .failure(let reason): result = .error(reason)
        case .success: if !authenticate(head: head, context: context, into: &verdict) { result = .error(verdict.reason ?? .missingProviderToken) }
        }
        let bytes = body.map { Array($0.readableBytesView) } ?? []
        let received = MockClock.monotonicNanoseconds()
        let requestID = head.requestID.flatMap { MockAPNsRules.isValidApnsID($0) ? $0 : nil } ?? rng.uuidString()
        let connectionID = self.connectionID
        let (decided, latency, waiters) = core.state.withLock { state -> (ChannelResult, Int, [MockSharedState.Waiter]) in
            var decided: ChannelResult
            if let fault = state.channelFault {
                state.channelFault = nil
                decided = ChannelResult(status: fault.decidedStatus ?? 0, reason: fault.reason, kind: fault.kind)
            } else if let early = result {
                decided = early
            } else if case .success(let (bundle, operation)) = route {
                decided = core.configuration.bundleIDs.contains(String(bundle))
                    ? Self.perform(operation, bundle: bundle, head: head, body: bytes, store: &state.channels) : .error(.topicDisallowed)
                if decided.status == 201, let lost = state.channelCreateAnswerLost {
                    // Created, and then the answer is lost.
                    state.channelCreateAnswerLost = nil
                    decided.kind = lost
                }
            } else {
                decided = .error(.badPath)
            }
            state.countAuthentication(auth: verdict.auth, switched: verdict.switched, violation: verdict.violation)
            state.stats.channelRequests += 1
            if decided.kind == .status {
                state.stats.byStatus[decided.status, default: 0] += 1
                if let reason = decided.reason { state.stats.byReason[reason, default: 0] += 1 }
            }
            if state.recordRequests {
                var answer = MockAnswer(kind: decided.kind, status: decided.status, reason: decided.reason)
                if decided.kind != .status { answer.status = nil }
                var record = Self.record(connectionID: connectionID, streamID: streamID, head: head, headers: headers, body: body,
                                         keepBody: state.recordBodies, verdict: verdict, answer: answer, status: answer.status,
                                         apnsID: requestID, receivedMonotonic: received)
                record.sequenceNumber = state.channelRecords.count + 1
                state.channelRecords.append(record)
            }
            return (decided, state.channelLatencyMilliseconds, state.satisfiedWaiters())
        }
        for waiter in waiters { waiter.notify(true) }
        guard latency > 0 else {
            writeChannelAnswer(decided, requestID: requestID, streamID: streamID, context: context)
            return
        }
        delayedAnswers += 1
        context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(latency))) {
            self.delayedAnswers -= 1
            guard context.channel.isActive else { return }
            self.writeChannelAnswer(decided, requestID: requestID, streamID: streamID, context: context)
            self.needsFlush = false
            context.flush()
            self.finishGoawayIfDone(context: context)
        }
    }

    /// The bundle id and operation a request's method and path name, or why none.
    static func channelRoute(_ head: RequestHead) -> Checked<(Substring, String)> {
        let parts = head.pathOnly.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "1", parts[2] == "apps", !parts[3].isEmpty else { return .failure(.badPath) }
        let method = head.method ?? ""
        switch parts[4] {
        case "channels":
            guard ["POST", "GET", "DELETE"].contains(method) else { return .failure(.methodNotAllowed) }
            return .success((parts[3], method))
        case "all-channels":
            guard method == "GET" else { return .failure(.methodNotAllowed) }
            return .success((parts[3], "LIST"))
        default:
            return .failure(.badPath)
        }
    }

    /// Carries out one valid, authenticated request on the store (under the server's lock).
    static func perform(_ operation: String, bundle: Substring, head: RequestHead, body: [UInt8], store: inout MockChannelStore) -> ChannelResult {
        if head.hasDuplicates { return .error(.duplicateHeaders) }
        let bundleID = String(bundle)
        switch operation {
        case "POST":
            guard let json = MockJSON.object(body) else { return .error(.payloadEmpty) }
            guard let pushType = json["push-type"] as? String else { return .error(.missingPushType) }
            guard pushType == "LiveActivity" else { return .error(.invalidPushType) }
            guard let policy = MockJSON.int64(json["message-storage-policy"]), policy == 0 || policy == 1 else {
                return ChannelResult(status: 400, reason: "BadMessageStoragePolicy")
            }
            guard let channel = store.create(bundleID: bundleID, storagePolicy: Int(policy)) else { return .error(.cannotCreateChannelConfig) }
            return ChannelResult(status: 201, channelID: channel.id)
        case "LIST":
            let ids = store.list(bundleID: bundleID).map { MockJSON.quoted($0.id) }
            return ChannelResult(status: 200, json: #"{"channels":["# + ids.joined(separator: ",") + "]}")
        default:
            guard let id = head.channelID, !id.isEmpty else { return .error(.missingChannelId) }
            guard let channel = store.channel(id: id, bundleID: bundleID) else { return .error(.channelNotRegistered) }
            if operation == "DELETE" {
                _ = store.delete(id: id)
                return ChannelResult(status: 204)
            }
            return ChannelResult(status: 200, json: #"{"message-storage-policy":\#(channel.storagePolicy),"push-type":"LiveActivity"}"#)
        }
    }

    private func writeChannelAnswer(_ result: ChannelResult, requestID: String, streamID: HTTP2StreamID, context: ChannelHandlerContext) {
        switch result.kind {
        case .noAnswer:
            return
        case .reset:
            write(HTTP2Frame(streamID: streamID, payload: .rstStream(.internalError)), context: context)
            return
        case .normal, .status:
            break
        }
        let body = result.json ?? result.reason.map { Responses.reasonBody($0, timestamp: nil) }
        guard let body else {
            var headers = HPACKHeaders()
            headers.add(name: ":status", value: String(result.kind == .normal ? 200 : result.status))
            headers.add(name: "apns-request-id", value: requestID)
            if let id = result.channelID { headers.add(name: "apns-channel-id", value: id) }
            write(HTTP2Frame(streamID: streamID, payload: .headers(.init(headers: headers, endStream: true))), context: context)
            return
        }
        let (headers, data) = Responses.json(streamID: streamID, status: result.status, body: body, apnsID: requestID, uniqueID: nil,
                                             idHeader: "apns-request-id", allocator: context.channel.allocator)
        write(headers, context: context)
        write(data, context: context)
    }
}
