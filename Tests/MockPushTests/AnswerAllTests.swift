import Foundation
import MockPush
import Testing

/// `answerEverything(with:)`: one answer for every valid request, token rules or not.
@Suite("Answering everything with one status")
struct AnswerAllTests {
    @Test("a failure rate of 1 leaves tokens with a rule alone; the answer-all does not")
    func overridesRules() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            let ruled = Fixtures.token(0x410)
            server.setRule(forToken: ruled, MockTokenRule(sequence: [.unregistered(at: 1_700_000_000_000)]))
            server.setFailureRate(MockFailureRate(rate: 1, answer: .status(500, reason: "InternalServerError")))
            server.answerEverything(with: .status(503, reason: "ServiceUnavailable"))
            let outage = try Curl.run(port: port, [.valid(jwt: jwt), .valid(jwt: jwt, token: ruled), .valid(jwt: jwt, token: ruled)])
            #expect(outage.responses.map(\.status) == [503, 503, 503])
            #expect(outage.responses.map(\.reason) == ["ServiceUnavailable", "ServiceUnavailable", "ServiceUnavailable"])

            server.answerEverything(with: .status(500, reason: "InternalServerError"))
            #expect(try Curl.one(port: port, .valid(jwt: jwt, token: ruled)).status == 500)

            // Off: the rule was not consumed meanwhile, and the failure rate covers only
            // tokens without a rule.
            server.answerEverything(with: nil)
            let after = try Curl.run(port: port, [.valid(jwt: jwt, token: ruled), .valid(jwt: jwt, token: ruled), .valid(jwt: jwt)])
            #expect(after.responses.map(\.status) == [410, 200, 500])
            let stats = server.stats()
            #expect(stats.count(status: 503) == 3)
            #expect(stats.count(status: 500) == 2)
        }
    }

    @Test("invalid requests still get their own answer")
    func validationFirst() async throws {
        try await withMock { server, port async throws in
            server.answerEverything(with: .error(.internalServerError))
            var bad = TestRequest.valid(jwt: try Fixtures.jwt())
            bad.set("apns-topic", nil)
            let response = try Curl.one(port: port, bad)
            #expect(response.status == 400)
            #expect(response.reason == "MissingTopic")
        }
    }

    @Test("POST /_mock/answer-all sets it on an open connection, null and reset turn it off")
    func controlAPI() async throws {
        try await withMock { server, port async throws in
            let jwt = try Fixtures.jwt()
            let result = try Curl.run(port: port, [
                .valid(jwt: jwt),
                ControlAPITests.control("POST", "/_mock/answer-all", body: #"{"kind":"status","status":503,"reason":"ServiceUnavailable"}"#),
                .valid(jwt: jwt),
                ControlAPITests.control("POST", "/_mock/answer-all", body: "null"),
                .valid(jwt: jwt),
            ])
            #expect(result.responses.map(\.status) == [200, 200, 503, 200, 200], "\(result.stderr)")
            #expect(result.responses[2].reason == "ServiceUnavailable")
            #expect(server.stats().connectionsOpened == 1)

            server.answerEverything(with: .status(500, reason: "InternalServerError"))
            #expect(try Curl.one(port: port, ControlAPITests.control("POST", "/_mock/reset")).status == 200)
            #expect(try Curl.one(port: port, .valid(jwt: jwt)).status == 200)
            #expect(try Curl.one(port: port, ControlAPITests.control("POST", "/_mock/answer-all", body: #"{"kind":"nope"}"#)).status == 400)
        }
    }
}
