/// What the mock's push service does with one Web Push message that passed its checks.
///
/// JSON form (control API): `{"kind":"status","status":429,"reason":"TooManyRequests","retryAfter":"30"}`,
/// `{"kind":"status","status":307,"location":"https://elsewhere.example/wp/1"}`; `kind` is
/// `normal` (201 with `Location`), `status` (`status` with `{"reason":…}` when a reason is given,
/// and `Retry-After` / `Location` headers when given), `noAnswer` (never answer the stream) or
/// `reset` (RST_STREAM INTERNAL_ERROR). `delayMilliseconds` delays the answer.
public struct MockWebPushAnswer: MockRuleAnswer {
    public enum Kind: String, Sendable, Hashable, Codable {
        case normal, status, noAnswer, reset
    }

    public var kind: Kind
    /// HTTP status for `.status`.
    public var status: Int?
    /// The body's `{"reason":…}` for `.status` (no body when nil).
    public var reason: String?
    /// The `Retry-After` header's value, verbatim (seconds or an HTTP-date).
    public var retryAfter: String?
    /// The `Location` header's value (a 3xx's target).
    public var location: String?
    /// Delay before answering, milliseconds. Nil or 0: at once.
    public var delayMilliseconds: Int?

    public init(kind: Kind, status: Int? = nil, reason: String? = nil, retryAfter: String? = nil, location: String? = nil,
                delayMilliseconds: Int? = nil) {
        self.kind = kind
        self.status = status
        self.reason = reason
        self.retryAfter = retryAfter
        self.location = location
        self.delayMilliseconds = delayMilliseconds
    }

    /// 201 Created with `Location` naming the message, as a push service accepts one (RFC 8030 §5).
    public static let normal = MockWebPushAnswer(kind: .normal)
    /// Never answer: the client's deadline must fire.
    public static let noAnswer = MockWebPushAnswer(kind: .noAnswer)
    /// Reset the stream (RST_STREAM INTERNAL_ERROR) instead of answering.
    public static let reset = MockWebPushAnswer(kind: .reset)

    /// `status`, with `{"reason":…}` when a reason is given and `Retry-After` when given,
    /// e.g. `.status(429, retryAfter: "30")`, `.status(503)`, `.status(410, reason: "Gone")`.
    public static func status(_ status: Int, reason: String? = nil, retryAfter: String? = nil) -> MockWebPushAnswer {
        MockWebPushAnswer(kind: .status, status: status, reason: reason, retryAfter: retryAfter)
    }

    /// A redirect: `status` (307 by default; any 3xx) with `Location: location`, which a sender
    /// must not follow.
    public static func redirect(_ status: Int = 307, to location: String) -> MockWebPushAnswer {
        MockWebPushAnswer(kind: .status, status: status, location: location)
    }

    /// This answer, sent after `milliseconds`.
    public func delayed(by milliseconds: Int) -> MockWebPushAnswer {
        var copy = self
        copy.delayMilliseconds = milliseconds
        return copy
    }

    /// The status counted and recorded: 201 for `normal`, nil for `noAnswer` and `reset`.
    var decidedStatus: Int? {
        switch kind {
        case .normal: return 201
        case .status: return status ?? 201
        case .noAnswer, .reset: return nil
        }
    }
}

/// Faults for one Web Push subscription or origin: `sequence` in order, one per message, then
/// `then` (default `.normal`).
public typealias MockWebPushRule = MockRule<MockWebPushAnswer>

extension MockRule {
    /// The next `count` requests get `answer`, later ones `.normal`: e.g.
    /// `MockWebPushRule.next(3, .status(429, retryAfter: "30"))`.
    public static func next(_ count: Int, _ answer: Answer) -> MockRule {
        MockRule(sequence: Array(repeating: answer, count: max(count, 0)))
    }
}
