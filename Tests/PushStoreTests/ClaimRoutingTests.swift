import PGClient
import PushCore
@testable import PushStore
import Testing

/// ``ClaimRouting``: the claim's credential parameters come from one map keyed by provider,
/// and the condition's text is the one the claim has always had (its plan is unchanged).
@Suite("Claim routing")
struct ClaimRoutingTests {
    /// The parameters as (names, default) pairs, provider by provider.
    static func pairs(_ routing: ClaimRouting) -> [([String]?, Bool?)] {
        let p = routing.parameters
        return stride(from: 0, to: p.count, by: 2).map { (p[$0] as? [String], p[$0 + 1] as? Bool) }
    }

    @Test("two parameters per provider, in Provider.allCases order, built from the map; a provider absent has none")
    func parameters() {
        #expect(ClaimRouting.parameterCount == 2 * Provider.allCases.count)
        let routing = ClaimRouting([.fcm: ["android", "default"]], only: nil)
        #expect(routing.parameters.count == ClaimRouting.parameterCount)
        let pairs = Self.pairs(routing)
        #expect(pairs.map(\.0) == [[], ["android", "default"]] && pairs.map(\.1) == [false, true])
        let both = Self.pairs(ClaimRouting([.apns: ["a"], .fcm: ["default"]], only: nil))
        #expect(both.map(\.0) == [["a"], ["default"]] && both.map(\.1) == [false, true])
    }

    @Test("a probe claims its endpoint's credential of its provider alone, whatever the map")
    func probe() {
        let probe = Self.pairs(ClaimRouting([.apns: ["default", "b"], .fcm: ["f"]], only: .fcm("f")))
        #expect(probe.map(\.0) == [[], ["f"]] && probe.map(\.1) == [false, false])
        let apns = Self.pairs(ClaimRouting([.fcm: ["f"]], only: Endpoint(credential: "default", environment: .development)))
        #expect(apns.map(\.0) == [["default"], []] && apns.map(\.1) == [true, false])
    }

    @Test("the condition's text is the claim's of 0.3.0 and before: the statement and its plan are unchanged")
    func sameText() {
        // The text ClaimRouting.sql(from: 5) rendered when it was written out by hand for APNs
        // and FCM: the claim statement embeds it, so the same text is the same statement. A
        // provider added changes it (one more branch): ClaimPlanTests then judge the plan.
        let before = """
            AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
                        OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8))))
            """
        #expect(ClaimRouting.sql(from: 5) == before)
    }

    @Test("the claim's parameters after the routing follow it: a provider added must renumber $9–$12 of the claim")
    func numbering() {
        // ClaimStatement.sql names $9–$12 (rotation, budget key, cap, rank) after the routing's
        // $5–$8; a third provider makes this fail until they move by two.
        #expect(ClaimStatement.firstFilterParameter == 5 + ClaimRouting.parameterCount + 4)
        let bound = ClaimStatement.bound(limit: 10, workerID: "w", leaseSeconds: 60, credentials: [.apns: ["default"]],
                                         defaultEnvironment: .production, only: nil, row: nil, excluding: [],
                                         rotation: 0, budget: nil, belowRank: nil)
        #expect(bound.parameters.count == ClaimStatement.firstFilterParameter - 1)
    }
}
