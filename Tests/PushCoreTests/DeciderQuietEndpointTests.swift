import PushCore
import Testing

/// A burst-suspect answer (`BadDeviceToken`, `DeviceTokenNotForTopic`, FCM's `SENDER_ID_MISMATCH`)
/// on an endpoint whose detector cannot judge yet: the row waits once, then is believed.
@Suite struct DeciderQuietEndpointTests {
    static let apns = Endpoint(credential: "default", environment: .development)
    static let fcm = Endpoint(credential: "default", environment: .production, provider: .fcm)
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    struct Case: Sendable, CustomTestStringConvertible {
        var outcome: Outcome
        var endpoint: Endpoint
        var reason: String
        var invalidates: Bool
        var testDescription: String { reason }
    }

    static let cases = [
        Case(outcome: .invalidateToken(reason: .badDeviceToken, at: nil), endpoint: apns, reason: "BadDeviceToken", invalidates: true),
        Case(outcome: .fail(.deviceTokenNotForTopic), endpoint: apns, reason: "DeviceTokenNotForTopic", invalidates: false),
        Case(outcome: .fcm(.fail(.senderIDMismatch)), endpoint: fcm, reason: "SENDER_ID_MISMATCH", invalidates: false),
    ]

    func answer(_ c: Case, row: Int64, last: String?, probe: Bool = false) -> Answer {
        Answer(row: row, endpoint: c.endpoint, attempts: 1, maxAttempts: 10, lastReason: last, isProbe: probe,
               outcome: c.outcome, reasonText: nil, isHTTPAnswer: true)
    }

    /// first answer: waits 1-16 s, attempt given back; the same answer again (lastReason): failed at face
    /// value, token invalidated for BadDeviceToken
    @Test("first answer waits 1-16 s with the attempt back; the same answer again fails at face value, token invalidated",
          arguments: cases)
    func waitsOnceThenBelieved(_ c: Case) {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let first = d.decide([answer(c, row: 1, last: nil)]).dispositions[0]
        #expect(first.status == .retrying && first.refundsAttempt && first.invalidation == nil && first.reason == c.reason)
        #expect(first.retryDelay >= 1 && first.retryDelay <= 16)
        let second = d.decide([answer(c, row: 1, last: c.reason)])
        #expect(second.dispositions[0].status == .failed && second.dispositions[0].reason == c.reason)
        #expect(!second.dispositions[0].refundsAttempt)
        #expect((second.dispositions[0].invalidation?.reason == c.reason) == c.invalidates)
        #expect(second.holds.isEmpty)
    }

    @Test("three bad tokens alone on an endpoint: each ends at its second answer, whatever the batching", arguments: cases)
    func threeAloneEnd(_ c: Case) {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let first = d.decide((1...3).map { answer(c, row: $0, last: nil) })
        #expect(first.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt })
        for row in Int64(1)...3 {
            let out = d.decide([answer(c, row: row, last: c.reason)])
            #expect(out.dispositions[0].status == .failed)
        }
    }

    @Test("a previous attempt that ended otherwise (a 500, a hold) is not the same answer: the row waits", arguments: cases)
    func otherLastReasonWaits(_ c: Case) {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        for last in ["InternalServerError", "TransportTimeout", c.reason + "x"] {
            let out = d.decide([answer(c, row: 1, last: last)]).dispositions[0]
            #expect(out.status == .retrying && out.refundsAttempt, "last \(last)")
        }
    }

    @Test("a probe of a held endpoint always waits, even after the same answer (a worker restarted in a burst)", arguments: cases)
    func probeWaits(_ c: Case) {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = d.decide((1...5).map { answer(c, row: $0, last: c.reason, probe: true) })
        #expect(out.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt && $0.invalidation == nil })
    }

    /// a busy endpoint in the wrong environment: the first few wait, the window fills meanwhile, and their
    /// second answers are held as a burst, nothing invalidated
    @Test("a busy endpoint in the wrong environment: the first few wait, and their second answers are held as a burst",
          arguments: cases)
    func busyBurstStillHeld(_ c: Case) {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let early = d.decide((1...5).map { answer(c, row: $0, last: nil) })
        #expect(early.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt })
        let rest = d.decide((6...40).map { answer(c, row: $0, last: nil) })
        #expect(rest.holds.map(\.kind) == [.burst])
        let again = d.decide((1...5).map { answer(c, row: $0, last: c.reason) })
        #expect(again.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt && $0.invalidation == nil })
        #expect(again.holds.map(\.kind) == [.burst])
    }
}
