import PropertyBased
import PushCore
import Testing

/// `Outcome.classify` and `APNsReason` over generated answers: every answer has one outcome,
/// and the outcomes that end or invalidate follow the table, whatever the status or text.
@Suite struct OutcomePropertyTests {
    static let reasonText = Gen.letterOrNumber.string(of: 0...24)
    static let knownReason = Gen<APNsReason?>.element(of: APNsReason.known).map { $0! }

    @Test func reasonTextRoundTrips() async {
        await propertyCheck(count: 500, input: Self.reasonText) { text in
            #expect(APNsReason(text).rawValue == text)
        }
        await propertyCheck(input: Self.knownReason) { reason in
            #expect(APNsReason(reason.rawValue) == reason)
        }
    }

    @Test func unknownTextsNeverEndOrInvalidate() async {
        await propertyCheck(count: 500, input: Gen.int(in: 100...599), Self.reasonText, Gen.int64(in: 0...Int64.max).optional) { status, text, timestamp in
            let reason = APNsReason(text)
            guard case .unknown = reason else { return }
            switch Outcome.classify(status: status, reason: reason, timestamp: timestamp) {
            case .sent: #expect(status == 200)
            case .retry(let kind):
                if status >= 500 { #expect(kind == .serverError(reason)) } else { #expect(kind == .unknownReason(text)) }
            default: Issue.record("an unknown reason \(text) with status \(status) must be retried")
            }
        }
    }

    @Test func everyAnswerIsClassified() async {
        await propertyCheck(count: 1000, input: Gen.int(in: 0...999), Self.knownReason.optional, Gen.int64(in: Int64.min...Int64.max).optional) { status, reason, timestamp in
            let outcome = Outcome.classify(status: status, reason: reason, timestamp: timestamp)
            if status == 200 { #expect(outcome == .sent); return }
            switch outcome {
            case .sent:
                Issue.record("status \(status) is not a success")
            case .invalidateToken(let r, let at):
                #expect([.unregistered, .expiredToken, .badDeviceToken].contains(r))
                #expect(reason == r || (reason == nil && status == 410 && r == .unregistered))
                #expect(r == .badDeviceToken ? at == nil : at == timestamp, "only a 410's own timestamp is kept")
            case .fail(let r):
                #expect(r == reason)
            case .pauseCredential(let text):
                #expect(text == reason?.rawValue)
            default:
                break
            }
        }
    }
}
