import PushCore
import Testing

/// The holds and backoffs of docs/faults.md and docs/configuration.md, one test per row, drawn
/// through the ``Decider``'s injected generator: the worker draws nothing itself.
@Suite struct DeciderHoldTests {
    static let e = Endpoint(credential: "default", environment: .production)
    static let fcm = Endpoint.fcm("default")
    let retry = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)
    let hold = HoldPolicy(pauseBaseSeconds: 30, pauseCapSeconds: 900, outageBaseSeconds: 1, outageCapSeconds: 45)

    func decider(_ random: some RandomNumberGenerator & Sendable) -> Decider {
        Decider(policy: retry, hold: hold, random: random)
    }

    func answer(_ row: Int64, _ outcome: Outcome, endpoint: Endpoint = e, attempts: Int = 1, last: String? = nil,
                probe: Bool = false, http: Bool = true) -> Answer {
        Answer(row: row, endpoint: endpoint, attempts: attempts, maxAttempts: 10, lastReason: last, isProbe: probe, outcome: outcome,
               reasonText: http ? nil : "TransportConnectFailed", isHTTPAnswer: http, deviceToken: "token\(row)")
    }

    /// The seconds to the first probe of each hold `answers` ask for.
    func scheduled(_ d: inout Decider, _ answers: [Answer]) -> [(kind: HoldKind, seconds: Double)] {
        d.schedule(d.decide(answers).holds).map { ($0.hold.kind, $0.seconds) }
    }

    // configuration.md, PUSHQ_PAUSE_BASE_SECONDS / _CAP_SECONDS; faults.md, "Credential paused":
    // probed after 30 s, doubling up to 15 min.
    @Test("a paused credential's probes: 30 s, then doubled intervals up to 15 min, whatever the draw",
          arguments: [HoldKind.credential, .burst], [0.0, 0.5, 0.999])
    func pauseIntervals(kind: HoldKind, unit: Double) {
        var random = FixedUnit(unit)
        #expect((0...7).map { hold.interval(kind, probes: $0, using: &random) } == [30, 60, 120, 240, 480, 900, 900, 900])
    }

    // configuration.md, PUSHQ_OUTAGE_PROBE_BASE_SECONDS / _CAP_SECONDS; faults.md, "endpoint down":
    // probes at doubled intervals from ~1 s to 45 s, each drawn between half and all of it.
    @Test("an outage's probes: doubled from 1 s up to 45 s, each drawn between half and all of it")
    func outageIntervals() {
        var low = FixedUnit(0), high = FixedUnit(0.999_999)
        #expect((0...7).map { hold.interval(.outage, probes: $0, using: &low) } == [0.5, 1, 2, 4, 8, 16, 22.5, 22.5])
        #expect((0...7).map { hold.interval(.outage, probes: $0, using: &high).rounded() } == [1, 2, 4, 8, 16, 32, 45, 45])
        var seeded = SeededRandom(seed: 7)
        for probes in 0...10 {
            let full = min(45, Double(1 << probes))
            let drawn = (0..<200).map { _ in hold.interval(.outage, probes: probes, using: &seeded) }
            #expect(drawn.allSatisfy { $0 >= full / 2 && $0 <= full }, "probe \(probes)")
            #expect(Set(drawn).count > 100, "the draws are jittered, not one value")
        }
    }

    // faults.md, "Credential paused" (InvalidProviderToken …): the hold's first probe after the pause base.
    @Test("a rejected credential is held with its first probe after the pause base, probed with one row")
    func credentialHold() {
        var d = decider(SeededRandom(seed: 1))
        let holds = scheduled(&d, [answer(1, .pauseCredential("InvalidProviderToken"))])
        #expect(holds.map(\.kind) == [.credential] && holds.map(\.seconds) == [30])
        #expect(hold.probeRows(.credential) == 1)
    }

    // faults.md, "Burst": endpoint held like a paused credential and probed with 5 rows.
    @Test("a burst of bad-token answers holds the endpoint like a paused credential, probed with five rows")
    func burstHold() {
        var d = decider(SeededRandom(seed: 2))
        let bad = Outcome.invalidateToken(reason: .badDeviceToken, at: nil)
        _ = d.decide((1...20).map { answer($0, .sent) })
        let holds = scheduled(&d, (21...40).map { answer($0, bad) })
        #expect(holds.map(\.kind) == [.burst] && holds.map(\.seconds) == [30])
        #expect(hold.probeRows(.burst) == 5)
    }

    // faults.md, "endpoint down": 3 different notifications failing take it down; first probe after ~1 s.
    @Test("an outage holds the endpoint with its first probe between half a second and one second")
    func outageHold() {
        for seed in UInt64(1)...20 {
            var d = decider(SeededRandom(seed: seed))
            let holds = scheduled(&d, (1...3).map { answer($0, .retry(.serverError(.internalServerError))) })
            #expect(holds.map(\.kind) == [.outage])
            #expect(holds.allSatisfy { $0.seconds >= 0.5 && $0.seconds <= 1 })
        }
    }

    // faults.md, FCM: 429 QUOTA_EXCEEDED for the project: held for Retry-After seconds.
    @Test("FCM's project quota holds the credential for Retry-After, not the policy's interval")
    func quotaHoldFollowsRetryAfter() {
        var d = decider(SeededRandom(seed: 3))
        let holds = scheduled(&d, [answer(1, .fcm(.backOffCredential(seconds: 120)), endpoint: Self.fcm)])
        #expect(holds.map(\.kind) == [.outage] && holds.map(\.seconds) == [120])
    }

    // A sender that cannot be built: the worker's own hold, scheduled by the same policy.
    @Test("a hold the worker asks for itself is scheduled by the same policy")
    func workerHold() {
        var d = decider(FixedUnit(0.5))
        let senderHold = HoldRequest(endpoint: Self.e, kind: .credential, reason: "SenderUnavailable", message: "m")
        let outage = HoldRequest(endpoint: Self.fcm, kind: .outage, reason: "X", message: "m")
        #expect(d.schedule([senderHold, outage]).map(\.seconds) == [30, 0.75])
    }

    // configuration.md, PUSHQ_RETRY_BASE_SECONDS: retry n waits the base plus a random time in
    // 0 … min(cap, base × 2^(n−1)); faults.md: 500/503 retried with backoff.
    @Test("retry n of a 500 waits the base plus a draw in 0 … min(cap, base × 2^(n−1))", arguments: [1, 2, 5, 9])
    func retryBackoff(attempt: Int) {
        let ceiling = min(600, Double(1 << (attempt - 1)))
        var low = decider(FixedUnit(0)), mid = decider(FixedUnit(0.5))
        let e500 = Outcome.retry(.serverError(.internalServerError))
        // Another endpoint per row keeps one failure from taking an endpoint down.
        func one(_ d: inout Decider) -> Double {
            d.decide([answer(1, e500, endpoint: Endpoint(credential: "c\(attempt)", environment: .production), attempts: attempt)])
                .dispositions[0].retryDelay
        }
        #expect(one(&low) == 1)
        #expect(one(&mid) == 1 + ceiling / 2)
    }

    // configuration.md, PUSHQ_RETRY_BASE_SECONDS: a resend that is not the notification's fault waits base … 2 × base;
    // faults.md: ExpiredProviderToken, Shutdown … resent after 1–2 s.
    @Test("a resend that is not the notification's fault waits between the base and twice the base")
    func soonResend() {
        var low = decider(FixedUnit(0)), high = decider(FixedUnit(0.999))
        let expired = Outcome.retryNow(.renewProviderToken)
        #expect(low.decide([answer(1, expired)]).dispositions[0].retryDelay == 1)
        #expect(abs(high.decide([answer(1, expired)]).dispositions[0].retryDelay - 1.999) < 1e-9)
    }

    // faults.md: 429 TooManyRequests, retrying after at least 5 minutes.
    @Test("APNs' 429 waits at least the throttle delay, plus the jitter")
    func tooManyRequests() {
        var low = decider(FixedUnit(0)), mid = decider(FixedUnit(0.5))
        #expect(low.decide([answer(1, .retry(.tooManyRequests))]).dispositions[0].retryDelay == 300)
        #expect(mid.decide([answer(1, .retry(.tooManyRequests))]).dispositions[0].retryDelay == 300.5)
    }

    // faults.md: too few answers to judge a bad token: the row waits once, 1–16 s.
    @Test("a bad token on a quiet endpoint waits once, between 1 and 16 s")
    func quietEndpointWait() {
        let bad = Outcome.invalidateToken(reason: .badDeviceToken, at: nil)
        var low = decider(FixedUnit(0)), high = decider(FixedUnit(0.999))
        #expect(low.decide([answer(1, bad)]).dispositions[0].retryDelay == 1)
        #expect(abs(high.decide([answer(1, bad)]).dispositions[0].retryDelay - 15.985) < 1e-9)
    }

    // faults.md, FCM: a 429 for one device: only that row, after Retry-After (60 s when none).
    @Test("FCM's 429 for one device retries only its row after Retry-After")
    func deviceThrottle() {
        var d = decider(SeededRandom(seed: 4))
        let out = d.decide([answer(1, .fcm(.throttleToken(seconds: 60)), endpoint: Self.fcm)])
        #expect(out.dispositions[0] == Disposition(status: .retrying, reason: "QUOTA_EXCEEDED", retryDelay: 60))
        #expect(out.holds.isEmpty)
    }

    @Test("the same seed draws the same delays and holds; another seed draws others")
    func seededIsReproducible() {
        let answers = (1...8).map { answer($0, .retry(.serverError(.internalServerError)), attempts: 6) }
        func run(_ seed: UInt64) -> ([Double], [Double]) {
            var d = decider(SeededRandom(seed: seed))
            let out = d.decide(answers)
            return (out.dispositions.map(\.retryDelay), d.schedule(out.holds).map(\.seconds))
        }
        #expect(run(11) == run(11))
        #expect(run(11).0 != run(12).0)
    }
}
