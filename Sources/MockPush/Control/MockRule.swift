/// An answer a ``MockRule`` hands out: ``MockAnswer`` (APNs) or ``MockFCMAnswer`` (FCM).
public protocol MockRuleAnswer: Sendable, Hashable, Codable {
    /// The answer a request gets without a fault: what a rule falls back to.
    static var normal: Self { get }
}

/// Answers for one token: `sequence` in order, one per request, then `then` for every later one.
///
/// Example: `MockTokenRule(sequence: [.error(.internalServerError), .error(.internalServerError)])`
/// answers 500, 500, then 200 forever. JSON: `{"sequence":[...answers...],"then":{...answer...}}`
/// (`then` defaults to `normal`).
public struct MockRule<Answer: MockRuleAnswer>: Sendable, Hashable, Codable {
    public var sequence: [Answer]
    public var then: Answer

    public init(sequence: [Answer] = [], then: Answer = .normal) {
        self.sequence = sequence
        self.then = then
    }

    /// Every request gets `answer`.
    public static func always(_ answer: Answer) -> MockRule {
        MockRule(then: answer)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.sequence = try c.decodeIfPresent([Answer].self, forKey: .sequence) ?? []
        self.then = try c.decodeIfPresent(Answer.self, forKey: .then) ?? .normal
    }
}

/// Faults for one APNs device token (matched case-insensitively).
public typealias MockTokenRule = MockRule<MockAnswer>
/// Faults for one FCM registration token (matched exactly).
public typealias MockFCMTokenRule = MockRule<MockFCMAnswer>

/// How far a token has gone through its rule; kept in the shared state, under the server's lock.
struct MockRuleProgress<Answer: MockRuleAnswer> {
    var rule: MockRule<Answer>
    var used = 0

    /// The answer for the next request: the next of the sequence, then `then`.
    mutating func next() -> Answer {
        guard used < rule.sequence.count else { return rule.then }
        used += 1
        return rule.sequence[used - 1]
    }
}
