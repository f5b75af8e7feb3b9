import PushCore
import Testing

/// What a response means, whichever provider answered (`PushResponse.outcome`, `.reasonText`).
@Suite struct PushResponseTests {
    static let apnsRequest = PushRequest(tag: 1, deviceToken: String(repeating: "a", count: 64), payload: [],
                                         fields: .apns(APNsHeaders(pushType: .alert, topic: "t", priority: 10, apnsID: "id")))
    static let fcmRequest = PushRequest(tag: 2, deviceToken: "fcm:x", payload: [], fields: .fcm)

    @Test("APNs answers are classified by Apple's table; the reason text is APNs' reason, else HTTPnnn")
    func apns() {
        let gone = PushResponse(request: Self.apnsRequest, status: 410, answer: .apns(APNsAnswer(reason: .unregistered, timestamp: 5)))
        #expect(gone.outcome == .invalidateToken(reason: .unregistered, at: 5))
        #expect(gone.reasonText == "Unregistered")
        let ok = PushResponse(request: Self.apnsRequest, status: 200, answer: .apns(APNsAnswer(apnsID: "id")))
        #expect(ok.outcome == .sent && ok.reasonText == "HTTP200" && ok.apns?.apnsID == "id" && ok.fcm == nil)
    }

    @Test("FCM answers are FCM's verdicts; the sender's own verdict on the credential comes first")
    func fcm() {
        let unregistered = FCMErrorBody(code: .unregistered, message: nil)
        let gone = PushResponse(request: Self.fcmRequest, status: 404, answer: .fcm(FCMAnswer(error: unregistered)))
        #expect(gone.outcome == .fcm(.invalidateToken(.unregistered)))
        #expect(gone.reasonText == "UNREGISTERED")
        let refused = PushResponse(request: Self.fcmRequest, answer: .fcm(FCMAnswer(credentialVerdict: .pauseCredential(.unauthenticated, message: "m"))))
        #expect(refused.outcome == .fcm(.pauseCredential(.unauthenticated, message: "m")))
        var again = PushResponse(request: Self.fcmRequest, status: 401, answer: .fcm(FCMAnswer(error: FCMErrorBody(code: .unauthenticated, message: nil))))
        #expect(again.outcome == .fcm(.refreshAccessToken))
        again.answer = .fcm(FCMAnswer(error: FCMErrorBody(code: .unauthenticated, message: nil), credentialVerdict: .pauseCredential(.unauthenticated, message: "m")))
        #expect(again.outcome == .fcm(.pauseCredential(.unauthenticated, message: "m")))
    }

    @Test("no answer: the transport failure decides, for either provider; an expired request is expired whatever else it says")
    func noAnswer() {
        for request in [Self.apnsRequest, Self.fcmRequest] {
            let lost = PushResponse(request: request, transportFailure: TransportFailure(kind: .connectionLost, message: "reset"))
            #expect(lost.outcome == .retry(.outcomeUnknown(.connectionLost)))
            #expect(lost.reasonText == "TransportConnectionLost")
            var expired = PushResponse(request: request, transportFailure: TransportFailure(kind: .timeout, message: ""))
            expired.expiredBeforeSending = true
            #expect(expired.outcome == .expiredBeforeSending)
        }
        #expect(PushResponse(request: Self.apnsRequest).outcome == .retry(.outcomeUnknown(.other)))
        #expect(PushResponse(request: Self.apnsRequest).reasonText == nil)
    }
}
