import PushCore
import Testing

/// Channel management: the requests on the wire, the parsed answers and what each means.
@Suite struct ChannelOutcomeTests {
    @Test func operationsOnTheWire() {
        let create = ChannelOperation.create(.mostRecentMessageStored)
        #expect(create.method == "POST" && create.path(bundleID: "com.a") == "/1/apps/com.a/channels" && create.channelID == nil)
        #expect(String(decoding: create.body, as: UTF8.self) == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        #expect(String(decoding: ChannelOperation.create(.noMessageStored).body, as: UTF8.self).contains(#""message-storage-policy":0"#))
        let read = ChannelOperation.read(channelID: "abc=")
        #expect(read.method == "GET" && read.path(bundleID: "com.a") == "/1/apps/com.a/channels" && read.channelID == "abc=" && read.body.isEmpty)
        let delete = ChannelOperation.delete(channelID: "abc=")
        #expect(delete.method == "DELETE" && delete.channelID == "abc=" && delete.successStatus == 204)
        #expect(ChannelOperation.listAll.method == "GET" && ChannelOperation.listAll.path(bundleID: "com.a") == "/1/apps/com.a/all-channels")
        #expect([create, read, delete, .listAll].map(\.name) == ["create", "read", "delete", "list"])
    }

    @Test func answersAreParsed() {
        let read = ChannelAnswer.parse(status: 200, requestID: "r", channelID: "", body: Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8))
        #expect(read == ChannelAnswer(status: 200, requestID: "r", storagePolicy: .noMessageStored, pushType: "LiveActivity"))
        let list = ChannelAnswer.parse(status: 200, requestID: nil, channelID: nil, body: Array(#"{"channels":["a","b"]}"#.utf8))
        #expect(list.channels == ["a", "b"])
        let error = ChannelAnswer.parse(status: 400, requestID: nil, channelID: nil, body: Array(#"{"reason":"BadChannelId"}"#.utf8))
        #expect(error.reason == .badChannelId)
        let garbage = ChannelAnswer.parse(status: 500, requestID: nil, channelID: nil, body: Array("<html>".utf8))
        #expect(garbage == ChannelAnswer(status: 500))
    }

    /// (operation, status, reason, answer headers and body) → outcome.
    static let table: [(ChannelOperation, ChannelAnswer, ChannelOutcome)] = [
        (.create(.noMessageStored), ChannelAnswer(status: 201, channelID: "id"), .done),
        (.create(.noMessageStored), ChannelAnswer(status: 201), .retry(.unknownReason("MissingChannelIdHeader"))),
        (.delete(channelID: "id"), ChannelAnswer(status: 204), .done),
        (.read(channelID: "id"), ChannelAnswer(status: 200, storagePolicy: .noMessageStored), .done),
        (.listAll, ChannelAnswer(status: 200, channels: []), .done),
        (.listAll, ChannelAnswer(status: 200), .retry(.unknownReason("MissingChannelList"))),
        (.delete(channelID: "id"), ChannelAnswer(status: 400, reason: .channelNotRegistered), .gone),
        (.read(channelID: "id"), ChannelAnswer(status: 400, reason: .channelNotRegistered), .gone),
        (.create(.noMessageStored), ChannelAnswer(status: 400, reason: .channelNotRegistered), .fail(.channelNotRegistered)),
        (.create(.noMessageStored), ChannelAnswer(status: 400, reason: .cannotCreateChannelConfig), .fail(.cannotCreateChannelConfig)),
        (.delete(channelID: "id"), ChannelAnswer(status: 400, reason: .badChannelId), .fail(.badChannelId)),
        (.read(channelID: ""), ChannelAnswer(status: 400, reason: .missingChannelId), .fail(.missingChannelId)),
        (.create(.noMessageStored), ChannelAnswer(status: 400, reason: .invalidPushType), .fail(.invalidPushType)),
        (.create(.noMessageStored), ChannelAnswer(status: 413), .fail(.payloadTooLarge)),
        (.listAll, ChannelAnswer(status: 404, reason: .badPath), .fail(.badPath)),
        (.listAll, ChannelAnswer(status: 403, reason: .invalidProviderToken), .hold(.credential, reason: "InvalidProviderToken")),
        (.listAll, ChannelAnswer(status: 403, reason: .badCertificate), .hold(.credential, reason: "BadCertificate")),
        (.create(.noMessageStored), ChannelAnswer(status: 403, reason: .topicDisallowed), .hold(.credential, reason: "TopicDisallowed")),
        (.create(.noMessageStored), ChannelAnswer(status: 400, reason: .featureNotEnabled), .hold(.credential, reason: "FeatureNotEnabled")),
        (.listAll, ChannelAnswer(status: 403, reason: .expiredProviderToken), .retryNow(.renewProviderToken)),
        (.listAll, ChannelAnswer(status: 429, reason: .tooManyProviderTokenUpdates), .retryNow(.freshConnection(.tooManyProviderTokenUpdates))),
        (.listAll, ChannelAnswer(status: 503, reason: .shutdown), .retryNow(.freshConnection(.shutdown))),
        (.listAll, ChannelAnswer(status: 429, reason: .tooManyRequests), .retry(.tooManyRequests)),
        (.listAll, ChannelAnswer(status: 429), .retry(.tooManyRequests)),
        (.listAll, ChannelAnswer(status: 500, reason: .internalServerError), .retry(.serverError(.internalServerError))),
        (.listAll, ChannelAnswer(status: 502), .retry(.serverError(nil))),
        (.listAll, ChannelAnswer(status: 400, reason: .idleTimeout), .retry(.idleTimeout)),
        (.listAll, ChannelAnswer(status: 400, reason: APNsReason("SomethingNew")), .retry(.unknownReason("SomethingNew"))),
        (.listAll, ChannelAnswer(status: 418), .retry(.unknownReason("HTTP418"))),
    ]

    @Test(arguments: 0..<table.count)
    func classifies(row: Int) {
        let (operation, answer, expected) = Self.table[row]
        #expect(ChannelOutcome.classify(answer, operation: operation) == expected)
    }

    @Test func everyKnownReasonIsClassifiedWithoutGuessing() {
        for reason in APNsReason.known {
            let outcome = ChannelOutcome.classify(ChannelAnswer(status: 400, reason: reason), operation: .listAll)
            if case .retry(.unknownReason) = outcome { Issue.record("\(reason.rawValue) classified as unknown") }
        }
    }

    @Test func withoutAnAnswer() {
        #expect(ChannelOutcome.classify(TransportFailure(kind: .timeout, message: "")) == .retry(.outcomeUnknown(.timeout)))
        #expect(ChannelOutcome.classify(TransportFailure(kind: .signingFailed, message: "")) == .hold(.credential, reason: "ProviderTokenSigningFailed"))
        #expect(ChannelOutcome.classify(TransportFailure(kind: .clientCertificateExpired, message: "")) == .hold(.credential, reason: "ClientCertificateExpired"))
        let none = ChannelResponse(operation: .create(.noMessageStored), transportFailure: TransportFailure(kind: .connect, message: ""))
        #expect(none.outcome == .retry(.outcomeUnknown(.connect)))
        #expect(none.outcome.healthSignal == .unreachable)
        #expect(none.createdChannelID == nil)
    }

    @Test func properties() {
        let created = ChannelResponse(operation: .create(.noMessageStored), answer: ChannelAnswer(status: 201, channelID: "id"))
        #expect(created.createdChannelID == "id")
        // Done with or not, attempt given back or not: what the channel loop carries out (ChannelDecision).
        func decision(_ outcome: ChannelOutcome) -> ChannelDecision {
            ChannelDecision.decide(outcome, operation: .delete, createdID: nil, attempts: 1, maxAttempts: 10, holds: 0,
                                   retry: RetryPolicy(), hold: HoldPolicy(), unitRandom: { 0.5 })
        }
        #expect(decision(.done) == .deleted && decision(.gone) == .deleted && decision(.fail(.badPath)) == .failed)
        #expect(decision(.retryNow(.renewProviderToken)) == .retry(afterSeconds: 0, refund: true))
        guard case .retry(_, true) = decision(.hold(.credential, reason: "x")),
              case .retry(_, false) = decision(.retry(.tooManyRequests)) else {
            Issue.record("a hold gives the attempt back, a retry counts it")
            return
        }
        #expect(ChannelOutcome.retry(.serverError(nil)).healthSignal == .serverFailure)
        #expect(ChannelOutcome.done.healthSignal == .reachable && ChannelOutcome.hold(.credential, reason: "x").healthSignal == .none)
        #expect(ChannelOutcome.done.reasonText == nil && ChannelOutcome.gone.reasonText == "ChannelNotRegistered")
        #expect(ChannelOutcome.retry(.outcomeUnknown(.timeout)).reasonText == "TransportTimeout")
        #expect(ChannelOutcome.retryNow(.renewProviderToken).reasonText == "ExpiredProviderToken")
    }

    @Test func managementHosts() {
        #expect(APNsEnvironment.production.channelManagementURL == "https://api-manage-broadcast.push.apple.com:2196")
        #expect(APNsEnvironment.development.channelManagementURL == "https://api-manage-broadcast.sandbox.push.apple.com:2195")
    }
}
