import PushCore
import Testing

@Suite struct DeciderTests {
    static let e = Endpoint(credential: "default", environment: .production)
    static let other = Endpoint(credential: "b", environment: .production)
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func answer(_ row: Int64, _ outcome: Outcome, attempts: Int = 1, max: Int = 10, last: String? = nil, probe: Bool = false,
                endpoint: Endpoint = e, http: Bool = true, token: TokenUse? = nil) -> Answer {
        Answer(row: row, endpoint: endpoint, attempts: attempts, maxAttempts: max, lastReason: last, isProbe: probe,
               outcome: outcome, reasonText: http ? nil : "TransportConnectFailed", isHTTPAnswer: http, token: token)
    }

    func decide(_ d: inout Decider, _ answers: [Answer]) -> Decisions {
        d.decide(answers)
    }

    static let e500 = Outcome.retry(.serverError(.internalServerError))
    static let refused = Outcome.retry(.outcomeUnknown(.connect))
    static let bad = Outcome.invalidateToken(reason: .badDeviceToken, at: nil)

    @Test("an outage: the batch that takes the endpoint down gives every attempt back and holds it; later failures wait too")
    func outage() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, [answer(1, Self.e500), answer(2, Self.e500), answer(3, Self.e500)])
        #expect(d.isDown(Self.e))
        #expect(out.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt && $0.retryDelay >= 1 })
        #expect(out.holds.map(\.kind) == [.outage])
        #expect(out.holds.first?.reason == "InternalServerError")
        #expect(out.holds.first?.message.contains("unreachable or failing") == true)
        let later = decide(&d, [answer(4, Self.e500, attempts: 9, max: 10)])
        #expect(later.dispositions[0].refundsAttempt && later.dispositions[0].status == .retrying)
        // The first 200 brings it back: nothing held, and the endpoint's hold is lifted.
        let back = decide(&d, [answer(5, .sent)])
        #expect(!d.isDown(Self.e))
        #expect(back.resumed == [Self.e])
        #expect(back.holds.isEmpty)
    }

    @Test("connection refused: never counts, and two in a row take the endpoint down even for one row")
    func refusedConnections() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let first = decide(&d, [Answer(row: 1, endpoint: Self.e, attempts: 10, maxAttempts: 10, lastReason: nil,
                                       outcome: Self.refused, reasonText: "TransportConnectFailed", isHTTPAnswer: false)])
        #expect(first.dispositions[0] == Disposition(status: .retrying, reason: "TransportConnectFailed", retryDelay: 1 + 0.5 * 512,
                                                     refundsAttempt: true))
        #expect(first.holds.isEmpty)
        let second = decide(&d, [answer(1, Self.refused, http: false)])
        #expect(d.isDown(Self.e))
        #expect(second.holds.map(\.reason) == ["TransportConnectFailed"])
    }

    @Test("a token that always gets 500 while others get 200 uses its attempts and ends failed")
    func rowSpecific500() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        var last: Disposition?
        for attempt in 1...10 {
            let out = decide(&d, [answer(1, Self.e500, attempts: attempt), answer(Int64(100 + attempt), .sent)])
            last = out.dispositions[0]
            #expect(out.holds.isEmpty)
            if attempt < 10 { #expect(last?.status == .retrying && last?.refundsAttempt == false) }
        }
        #expect(last == Disposition(status: .failed, reason: "InternalServerError"))
        #expect(!d.isDown(Self.e))
    }

    @Test("a probe that fails gives its attempt back, whether or not this worker saw the endpoint go down")
    func probeFailure() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, [answer(1, Self.e500, attempts: 10, max: 10, probe: true)])
        #expect(!d.isDown(Self.e))
        #expect(out.dispositions[0].status == .retrying && out.dispositions[0].refundsAttempt)
        #expect(out.holds.isEmpty)  // the hold stands already; the probe moved its next time
        let ok = decide(&d, [answer(1, .sent, probe: true)])
        #expect(ok.resumed == [Self.e])
    }

    @Test("BadDeviceToken before the detector can judge: the row waits, attempt given back, nothing invalidated")
    func burstCannotJudge() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, [answer(1, Self.bad)])
        let w = out.dispositions[0]
        #expect(w.status == .retrying && w.refundsAttempt && w.invalidation == nil && w.reason == "BadDeviceToken")
        #expect(w.retryDelay >= 1 && w.retryDelay <= 16)
        #expect(out.holds.isEmpty)
    }

    @Test("a real bad token among good ones is invalidated on its second attempt at the latest")
    func realBadToken() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        #expect(decide(&d, [answer(1, Self.bad)]).dispositions[0].invalidation == nil)
        _ = decide(&d, (0..<19).map { answer(Int64(100 + $0), .sent) })
        let second = decide(&d, [answer(1, Self.bad, attempts: 1, last: "BadDeviceToken")])
        #expect(second.dispositions[0].status == .failed)
        #expect(second.dispositions[0].invalidation?.reason == "BadDeviceToken")
        // With enough answers already, a bad token is acted on at its first attempt.
        #expect(decide(&d, [answer(2, Self.bad)]).dispositions[0].invalidation != nil)
    }

    @Test("a burst invalidates nothing, holds the endpoint, and the detector survives the hold")
    func burst() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, (0..<20).map { answer(Int64($0), Self.bad) })
        #expect(out.dispositions.allSatisfy { $0.invalidation == nil && $0.refundsAttempt && $0.status == .retrying })
        #expect(out.holds.map(\.kind) == [.burst])
        #expect(out.holds.first?.reason == "BadDeviceTokenBurst")
        // The probe after the hold: still judged as a burst (state kept), still nothing invalidated.
        let probe = decide(&d, (0..<5).map { answer(Int64($0), Self.bad, probe: true) })
        #expect(probe.dispositions.allSatisfy { $0.invalidation == nil && $0.refundsAttempt })
        #expect(d.isBurst(Self.e))
        // DeviceTokenNotForTopic is judged the same way.
        var t = Decider(policy: policy, random: FixedUnit(0.5))
        let topic = decide(&t, (0..<20).map { answer(Int64($0), .fail(.deviceTokenNotForTopic)) })
        #expect(topic.dispositions.allSatisfy { $0.status == .retrying })
        #expect(topic.holds.first?.reason == "DeviceTokenNotForTopicBurst")
    }

    @Test("ExpiredProviderToken for two freshly minted tokens holds the credential with a message about the clock")
    func wrongClock() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let expired = Outcome.retryNow(.renewProviderToken)
        let first = decide(&d, [answer(1, expired, token: TokenUse(serial: 1, ageSeconds: 2)),
                                answer(2, expired, token: TokenUse(serial: 1, ageSeconds: 2))])
        #expect(first.holds.isEmpty)
        #expect(first.dispositions.allSatisfy { $0.refundsAttempt && $0.retryDelay >= 1 })
        let second = decide(&d, [answer(3, expired, token: TokenUse(serial: 2, ageSeconds: 1))])
        #expect(second.holds.map(\.kind) == [.credential])
        #expect(second.holds.first?.reason == "ExpiredProviderToken")
        #expect(second.holds.first?.message.contains("clock") == true)
        #expect(second.dispositions[0].refundsAttempt)
        // Tokens that really were old: renewed and resent, no hold.
        var old = Decider(policy: policy, random: FixedUnit(0.5))
        let stale = decide(&old, [answer(1, expired, token: TokenUse(serial: 1, ageSeconds: 3599)),
                                  answer(2, expired, token: TokenUse(serial: 2, ageSeconds: 3601))])
        #expect(stale.holds.isEmpty)
    }

    @Test("a rejected credential is held; a 200 for it in the same batch does not lift the new hold")
    func credentialRejected() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, [answer(1, .sent), answer(2, .pauseCredential("InvalidProviderToken"), attempts: 10, max: 10)])
        #expect(out.holds == [HoldRequest(endpoint: Self.e, kind: .credential, reason: "InvalidProviderToken",
                                         message: out.holds.first?.message ?? "")])
        #expect(out.holds.first?.message.contains("check the key id") == true)
        #expect(out.resumed.isEmpty)
        #expect(out.dispositions[1].refundsAttempt)
        // A certificate that cannot be used says so.
        let cert = decide(&d, [answer(3, .pauseCredential("ClientCertificateExpired"), http: false)])
        #expect(cert.holds.first?.message.contains("client certificate") == true)
    }

    @Test("a provider token that cannot be signed holds the credential, its rows waiting with their attempts back")
    func signingFailurePausesTheCredential() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let signing = Outcome.classify(TransportFailure(kind: .signingFailed, message: "EVP_DigestSign failed"))
        let out = decide(&d, [answer(1, signing, attempts: 10, max: 10, http: false), answer(2, signing, http: false)])
        #expect(out.holds.map(\.kind) == [.credential])
        #expect(out.holds.first?.reason == "ProviderTokenSigningFailed")
        #expect(out.holds.first?.message.contains("cannot be signed") == true)
        #expect(out.dispositions.allSatisfy { $0.status == .retrying && $0.refundsAttempt })
        #expect(!d.isDown(Self.e))
    }

    @Test("InvalidHeader ends only its row, failed, and never takes the endpoint down or holds it")
    func invalidHeaderIsTheRowsOwn() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let invalid = Outcome.classify(TransportFailure(kind: .invalidHeader, message: "apns-topic holds a control character"))
        let answers = (1...20).map { answer(Int64($0), invalid, http: false) }
        let out = decide(&d, answers)
        #expect(out.dispositions.allSatisfy { $0 == Disposition(status: .failed, reason: "InvalidHeader") })
        #expect(out.holds.isEmpty)
        #expect(!d.isDown(Self.e) && !d.isBurst(Self.e))
    }

    @Test("endpoints are judged apart: one down does not hold another")
    func endpointsApart() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, [answer(1, Self.e500), answer(2, Self.e500), answer(3, Self.e500), answer(4, .sent, endpoint: Self.other)])
        #expect(d.isDown(Self.e) && !d.isDown(Self.other))
        #expect(out.holds.map(\.endpoint) == [Self.e])
        #expect(out.resumed == [Self.other])
    }

    @Test("a 429 throttles the token; a send-time expiry ends the row expired")
    func throttleAndExpiry() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = decide(&d, [answer(1, .retry(.tooManyRequests)), answer(2, .expiredBeforeSending, http: false)])
        #expect(out.dispositions[0].throttlesToken && out.dispositions[0].retryDelay >= 300)
        #expect(out.dispositions[1].status == .expired)
    }
}
