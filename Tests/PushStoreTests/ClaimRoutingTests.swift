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
        #expect(pairs.map(\.0) == [[], ["android", "default"], []] && pairs.map(\.1) == [false, true, false])
        let all = Self.pairs(ClaimRouting([.apns: ["a"], .fcm: ["default"], .webpush: ["w", "default"]], only: nil))
        #expect(all.map(\.0) == [["a"], ["default"], ["w", "default"]] && all.map(\.1) == [false, true, true])
    }

    @Test("a probe claims its endpoint's credential of its provider alone, whatever the map")
    func probe() {
        let probe = Self.pairs(ClaimRouting([.apns: ["default", "b"], .fcm: ["f"]], only: .fcm("f")))
        #expect(probe.map(\.0) == [[], ["f"], []] && probe.map(\.1) == [false, false, false])
        let apns = Self.pairs(ClaimRouting([.fcm: ["f"]], only: Endpoint(credential: "default", environment: .development)))
        #expect(apns.map(\.0) == [["default"], [], []] && apns.map(\.1) == [true, false, false])
    }

    @Test("the condition's text is APNs' and FCM's branches as they were, then one branch for each provider added")
    func sameText() {
        // The text ClaimRouting.sql(from: 5) rendered when it was written out by hand for APNs
        // and FCM; Web Push's branch follows with its parameters after the claim's own ($13,
        // $14). ClaimPlanTests judge the plan of the statement that embeds it.
        let text = """
            AND ((n.provider = 'apns' AND (n.credential = ANY($5::text[]) OR (n.credential IS NULL AND $6)))
                        OR (n.provider = 'fcm' AND (n.credential = ANY($7::text[]) OR (n.credential IS NULL AND $8)))
                        OR (n.provider = 'webpush' AND (n.credential = ANY($13::text[]) OR (n.credential IS NULL AND $14))))
            """
        #expect(ClaimRouting.sql(number: ClaimStatement.routingParameter) == text)
    }

    @Test("a provider added takes the next two parameters of the claim and moves no other one")
    func numbering() {
        // The claim's own parameters are $1–$4 and $9–$12 whatever the providers; the first two
        // providers' routing is $5–$8 (the text APNs and FCM have always had), a later one's
        // follows $12. For any count of providers the numbers are 1 up to the filter's first,
        // each once, and no provider's number depends on how many come after it.
        let own = [1, 2, 3, 4, 9, 10, 11, 12]
        #expect((0..<2).map(ClaimStatement.routingParameter) == [5, 7])
        for count in 2...6 {
            let routing = (0..<count).flatMap { [ClaimStatement.routingParameter($0), ClaimStatement.routingParameter($0) + 1] }
            let firstFilter = 13 + 2 * (count - ClaimStatement.providersBeforeOwn)
            #expect((own + routing).sorted() == Array(1..<firstFilter), "providers: \(count)")
        }
        #expect(ClaimStatement.firstFilterParameter == 13 + 2 * (Provider.allCases.count - ClaimStatement.providersBeforeOwn))
    }

    @Test("each provider's names and default are bound at the numbers its branch of the claim's text names")
    func boundWhereNamed() {
        // Every provider a credential of its own name: the parameter at the number the text
        // names for a provider holds that provider's names; $9 the rotation.
        let names = Dictionary(uniqueKeysWithValues: Provider.allCases.map { ($0, ["only-\($0.rawValue)"]) })
        let bound = ClaimStatement.bound(limit: 10, workerID: "w", leaseSeconds: 60, credentials: names,
                                         defaultEnvironment: .production, only: nil, row: nil, excluding: [],
                                         rotation: 42, budget: nil, belowRank: nil)
        #expect(bound.parameters.count == ClaimStatement.firstFilterParameter - 1)
        #expect(bound.parameters[8] as? Int == 42)
        for (i, provider) in Provider.allCases.enumerated() {
            let p = ClaimStatement.routingParameter(i)
            #expect(bound.sql.contains("n.provider = '\(provider.rawValue)' AND (n.credential = ANY($\(p)::text[]) OR (n.credential IS NULL AND $\(p + 1)))"))
            #expect(bound.parameters[p - 1] as? [String] == ["only-\(provider.rawValue)"] && bound.parameters[p] as? Bool == false)
        }
    }
}
