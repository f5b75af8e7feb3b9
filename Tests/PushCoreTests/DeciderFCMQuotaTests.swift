import PushCore
import Testing

/// FCM's 429: one device's rate slows only that device's rows; the project's quota holds the credential.
@Suite struct DeciderFCMQuotaTests {
    static let e = Endpoint.fcm("default")
    let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)

    func answer(_ row: Int64, _ verdict: FCMVerdict, token: String, attempts: Int = 1, max: Int = 10) -> Answer {
        Answer(row: row, endpoint: Self.e, attempts: attempts, maxAttempts: max, lastReason: nil,
               outcome: .fcm(verdict), reasonText: nil, isHTTPAnswer: true, deviceToken: token)
    }

    static let throttled = FCMVerdict.throttleToken(seconds: 60)

    /// one hot token: each of its rows retries after Retry-After with an attempt counted; nothing held,
    /// however many of its rows, and others are sent
    @Test("one hot token: its rows retry after Retry-After with an attempt counted; nothing held, other rows sent")
    func oneHotToken() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = d.decide((1...40).map { answer($0, Self.throttled, token: "hot") } + [answer(41, .sent, token: "other")])
        #expect(out.holds.isEmpty)
        #expect(out.dispositions.prefix(40).allSatisfy {
            $0 == Disposition(status: .retrying, reason: "QUOTA_EXCEEDED", retryDelay: 60)
        })
        #expect(out.dispositions[40].status == .sent)
        // At max_attempts the row ends failed: a device flooded for good does not retry forever.
        let last = d.decide([answer(1, Self.throttled, token: "hot", attempts: 10)])
        #expect(last.dispositions[0] == Disposition(status: .failed, reason: "QUOTA_EXCEEDED"))
        #expect(last.holds.isEmpty)
    }

    @Test("tokens getting 429 while most tokens get 200: no hold", arguments: [1, 2, 3, 10])
    func fewAmongMany(_ hot: Int) {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let good = (0..<(hot + 1)).map { answer(Int64(100 + $0), .sent, token: "good\($0)") }
        let out = d.decide(good + (0..<hot).map { answer(Int64($0), Self.throttled, token: "hot\($0)") })
        #expect(out.holds.isEmpty)
    }

    /// three different tokens with 429 and no 200s: the project's quota; the credential is held for
    /// Retry-After, those rows wait with their attempts back
    @Test("three tokens with 429 and no 200s: the project's quota holds the credential for Retry-After, attempts given back")
    func manyTokensHold() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let first = d.decide([answer(1, Self.throttled, token: "a"), answer(2, Self.throttled, token: "b")])
        #expect(first.holds.isEmpty && first.dispositions.allSatisfy { !$0.refundsAttempt })
        let out = d.decide([answer(3, Self.throttled, token: "c"), answer(4, Self.throttled, token: "a")])
        #expect(out.holds.count == 1)
        #expect(out.holds.first?.endpoint == Self.e && out.holds.first?.kind == .outage)
        #expect(out.holds.first?.reason == "QUOTA_EXCEEDED" && out.holds.first?.seconds == 60)
        #expect(out.dispositions.allSatisfy { $0 == .waiting(reason: "QUOTA_EXCEEDED", delay: 60) })
        // The quota back: a 200 for each token lifts the judgement (and the hold).
        let back = d.decide(["a", "b", "c"].enumerated().map { answer(Int64(10 + $0.offset), .sent, token: $0.element) })
        #expect(back.resumed == [Self.e])
        #expect(d.decide([answer(20, Self.throttled, token: "d")]).holds.isEmpty)
    }

    @Test("an answer naming the project's quota holds the credential at once")
    func projectNamed() {
        var d = Decider(policy: policy, random: FixedUnit(0.5))
        let out = d.decide([answer(1, .backOffCredential(seconds: 90), token: "a")])
        #expect(out.holds.first?.seconds == 90)
    }
}
