/// What the mock does with one request that passed validation.
///
/// JSON form (control API): `{"kind":"status","status":410,"reason":"Unregistered","timestamp":1700000000000,"delayMilliseconds":0}`;
/// `kind` is one of `normal` (answer 200 as usual), `status` (answer `status` with
/// `{"reason":reason}` and `timestamp` when given), `noAnswer` (never answer the stream),
/// `reset` (RST_STREAM with INTERNAL_ERROR, no headers). `delayMilliseconds` delays the
/// answer (or the reset).
public struct MockAnswer: MockRuleAnswer {
    public enum Kind: String, Sendable, Hashable, Codable {
        case normal, status, noAnswer, reset
    }

    public var kind: Kind
    /// HTTP status for `.status`.
    public var status: Int?
    /// APNs reason for `.status` (omitted from the body when nil).
    public var reason: String?
    /// Milliseconds since the epoch, sent as `timestamp` (Apple sends it with 410 only).
    public var timestamp: Int64?
    /// Delay before answering, milliseconds. Nil or 0: at once.
    public var delayMilliseconds: Int?

    public init(kind: Kind, status: Int? = nil, reason: String? = nil, timestamp: Int64? = nil, delayMilliseconds: Int? = nil) {
        self.kind = kind
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.delayMilliseconds = delayMilliseconds
    }

    /// Answer as a valid request normally is: 200.
    public static let normal = MockAnswer(kind: .normal)
    /// Never answer: the client's deadline must fire.
    public static let noAnswer = MockAnswer(kind: .noAnswer)
    /// Reset the stream (RST_STREAM INTERNAL_ERROR) instead of answering.
    public static let reset = MockAnswer(kind: .reset)

    /// Answer with the reason's own status (Apple's, ``MockAPNsReason/status``) and `{"reason":...}`.
    public static func error(_ reason: MockAPNsReason, timestamp: Int64? = nil) -> MockAnswer {
        MockAnswer(kind: .status, status: reason.status, reason: reason.rawValue, timestamp: timestamp)
    }

    /// Answer `status` with an optional reason (200 with nil reason is a plain success).
    public static func status(_ status: Int, reason: String? = nil) -> MockAnswer {
        MockAnswer(kind: .status, status: status, reason: reason)
    }

    /// 410 `Unregistered` with `timestamp` (milliseconds since the epoch).
    public static func unregistered(at timestampMilliseconds: Int64) -> MockAnswer {
        .error(.unregistered, timestamp: timestampMilliseconds)
    }

    /// The status this answer is counted and recorded with: 200 for `normal`, nil for `noAnswer`
    /// and `reset` (no status goes out).
    var decidedStatus: Int? {
        switch kind {
        case .normal: return 200
        case .status: return status ?? 200
        case .noAnswer, .reset: return nil
        }
    }

    /// This answer, sent after `milliseconds`.
    public func delayed(by milliseconds: Int) -> MockAnswer {
        var copy = self
        copy.delayMilliseconds = milliseconds
        return copy
    }
}

/// Random failures for requests that have no token rule: each valid request gets
/// `answer` with probability `rate`, drawn from a generator seeded with `seed`
/// (same seed, same order of requests → same failures).
///
/// JSON: `{"rate":0.05,"answer":{"kind":"status","status":503,"reason":"ServiceUnavailable"},"seed":42}`.
public struct MockFailureRate: Sendable, Hashable, Codable {
    public var rate: Double
    public var answer: MockAnswer
    public var seed: UInt64

    public init(rate: Double, answer: MockAnswer, seed: UInt64 = 1) {
        self.rate = rate
        self.answer = answer
        self.seed = seed
    }
}
