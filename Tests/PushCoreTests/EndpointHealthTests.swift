import PushCore
import Testing

@Suite struct EndpointHealthTests {
    typealias S = EndpointHealth.Signal

    /// (answers as (signal, row), down afterwards)
    static let table: [(String, [(S, Int64)], Bool)] = [
        ("two connection failures in a row", [(.unreachable, 1), (.unreachable, 1)], true),
        ("one connection failure", [(.unreachable, 1)], false),
        ("a success between connection failures", [(.unreachable, 1), (.reachable, 2), (.unreachable, 3)], false),
        ("5xx from three different rows", [(.serverFailure, 1), (.serverFailure, 2), (.serverFailure, 3)], true),
        ("5xx from two rows", [(.serverFailure, 1), (.serverFailure, 2)], false),
        ("one row that always gets 500", [(.serverFailure, 1), (.serverFailure, 1), (.serverFailure, 1), (.serverFailure, 1)], false),
        ("one row's 500s between other rows' 200s",
         [(.serverFailure, 1), (.reachable, 2), (.serverFailure, 1), (.reachable, 3), (.serverFailure, 1), (.reachable, 4)], false),
        ("5xx from three rows with a 200 between", [(.serverFailure, 1), (.serverFailure, 2), (.reachable, 9), (.serverFailure, 3)], false),
        ("timeouts and lost connections count like 5xx", [(.serverFailure, 1), (.unreachable, 2), (.serverFailure, 3)], true),
        ("a 200 brings it back up", [(.unreachable, 1), (.unreachable, 2), (.reachable, 3)], false),
        ("local errors say nothing", [(.unreachable, 1), (.none, 2), (.unreachable, 3)], true),
    ]

    @Test("down when unreachable twice in a row or three rows fail with no sign of life; up at the first answer",
          arguments: table.indices)
    func rows(index: Int) {
        let (name, answers, down) = Self.table[index]
        var h = EndpointHealth()
        for (signal, row) in answers { h.record(signal, row: row) }
        #expect(h.isDown == down, "\(name)")
    }

    @Test("outcomes map to health signals")
    func signals() {
        #expect(Outcome.sent.healthSignal == .reachable)
        #expect(Outcome.fail(.badTopic).healthSignal == .reachable)
        #expect(Outcome.invalidateToken(reason: .unregistered, at: nil).healthSignal == .reachable)
        #expect(Outcome.retry(.tooManyRequests).healthSignal == .reachable)
        #expect(Outcome.retryNow(.renewProviderToken).healthSignal == .reachable)
        #expect(Outcome.retry(.serverError(nil)).healthSignal == .serverFailure)
        #expect(Outcome.retryNow(.freshConnection(.shutdown)).healthSignal == .serverFailure)
        #expect(Outcome.retry(.outcomeUnknown(.timeout)).healthSignal == .serverFailure)
        #expect(Outcome.retry(.outcomeUnknown(.connectionLost)).healthSignal == .serverFailure)
        #expect(Outcome.retry(.outcomeUnknown(.connect)).healthSignal == .unreachable)
        #expect(Outcome.retry(.outcomeUnknown(.tls)).healthSignal == .unreachable)
        #expect(Outcome.retry(.outcomeUnknown(.cancelled)).healthSignal == .none)
        #expect(Outcome.pauseCredential("InvalidProviderToken").healthSignal == .none)
        #expect(Outcome.expiredBeforeSending.healthSignal == .none)
    }
}

@Suite struct HoldPolicyTests {
    let policy = HoldPolicy(pauseBaseSeconds: 30, pauseCapSeconds: 900, outageBaseSeconds: 1, outageCapSeconds: 45)

    @Test("credential and burst holds double from the pause base up to the cap", arguments: [HoldKind.credential, .burst])
    func pauses(kind: HoldKind) {
        #expect((0...7).map { policy.interval(kind, probes: $0, unitRandom: { 0.3 }) } == [30, 60, 120, 240, 480, 900, 900, 900])
    }

    @Test("outage probes double from 1 s up to 45 s, each drawn between half and all of it")
    func outages() {
        #expect((0...7).map { policy.interval(.outage, probes: $0, unitRandom: { 0.999_999 }) }.map { $0.rounded() }
                == [1, 2, 4, 8, 16, 32, 45, 45])
        #expect((0...7).map { policy.interval(.outage, probes: $0, unitRandom: { 0 }) } == [0.5, 1, 2, 4, 8, 16, 22.5, 22.5])
        #expect(policy.interval(.outage, probes: 1000, unitRandom: { 1 }) == 45)
    }

    @Test("one probe row for a credential or an outage, a few for a burst")
    func probeRows() {
        #expect(policy.probeRows(.credential) == 1)
        #expect(policy.probeRows(.outage) == 1)
        #expect(policy.probeRows(.burst) == 5)
    }
}
