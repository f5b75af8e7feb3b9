import PushCore

/// What the mock does with one request that passed validation.
///
/// JSON form (control API): `{"kind":"status","status":410,"reason":"Unregistered","timestamp":1700000000000,"delayMilliseconds":0}`;
/// `kind` is one of `normal` (answer 200 as usual), `status` (answer `status` with
/// `{"reason":reason}` and `timestamp` when given), `noAnswer` (never answer the stream),
/// `reset` (RST_STREAM with INTERNAL_ERROR, no headers). `delayMilliseconds` delays the
/// answer (or the reset).
public struct MockAnswer: Sendable, Hashable, Codable {
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

    /// Answer with the reason's own status (`APNsReason.httpStatus`) and `{"reason":...}`.
    public static func error(_ reason: APNsReason, timestamp: Int64? = nil) -> MockAnswer {
        MockAnswer(kind: .status, status: reason.httpStatus, reason: reason.rawValue, timestamp: timestamp)
    }

    /// Answer `status` with an optional reason (200 with nil reason is a plain success).
    public static func status(_ status: Int, reason: String? = nil) -> MockAnswer {
        MockAnswer(kind: .status, status: status, reason: reason)
    }

    /// 410 `Unregistered` with `timestamp` (milliseconds since the epoch).
    public static func unregistered(at timestampMilliseconds: Int64) -> MockAnswer {
        .error(.unregistered, timestamp: timestampMilliseconds)
    }

    /// This answer, sent after `milliseconds`.
    public func delayed(by milliseconds: Int) -> MockAnswer {
        var copy = self
        copy.delayMilliseconds = milliseconds
        return copy
    }
}

/// Faults for one device token: answers `sequence` in order, one per request, then
/// `then` for every later request.
///
/// Example: `MockTokenRule(sequence: [.error(.internalServerError), .error(.internalServerError)])`
/// answers 500, 500, then 200 forever. JSON: `{"sequence":[...answers...],"then":{...answer...}}`
/// (`then` defaults to `normal`).
public struct MockTokenRule: Sendable, Hashable, Codable {
    public var sequence: [MockAnswer]
    public var then: MockAnswer

    public init(sequence: [MockAnswer] = [], then: MockAnswer = .normal) {
        self.sequence = sequence
        self.then = then
    }

    /// Every request gets `answer`.
    public static func always(_ answer: MockAnswer) -> MockTokenRule {
        MockTokenRule(then: answer)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.sequence = try c.decodeIfPresent([MockAnswer].self, forKey: .sequence) ?? []
        self.then = try c.decodeIfPresent(MockAnswer.self, forKey: .then) ?? .normal
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

/// Connection-level faults. Nil fields are off.
///
/// JSON: `{"goawayAfterStreams":100,"goawayReason":"Shutdown","closeAfterRequests":50,"idleTimeoutMilliseconds":2000,"idleBlackhole":false,"tokenMaxAgeSeconds":-1}`.
public struct MockConnectionFaults: Sendable, Hashable, Codable {
    /// Send GOAWAY (NO_ERROR, debug data `{"reason":goawayReason}`) when a connection
    /// receives its Nth request; that request and earlier ones are answered, later
    /// streams are refused by the GOAWAY, and the connection closes once they are answered.
    public var goawayAfterStreams: Int?
    /// The reason in the GOAWAY's debug data. Defaults to `Shutdown`.
    public var goawayReason: String?
    /// Close the TCP connection (no GOAWAY) right after answering its Nth request.
    public var closeAfterRequests: Int?
    /// Kill a connection that received no frame (PINGs count) for this long.
    /// Read when a connection opens.
    public var idleTimeoutMilliseconds: Int?
    /// How an idle connection dies: false/nil closes it (TCP FIN), true blackholes it, as a
    /// NAT or firewall does: the mock stops reading and writing, the socket stays open, so
    /// the client learns only from its own deadlines or unanswered PINGs.
    public var idleBlackhole: Bool?
    /// The oldest provider token accepted, seconds: a JWT whose age (mock clock − `iat`)
    /// is greater gets 403 `ExpiredProviderToken`. Nil is Apple's 3600. Negative: every
    /// token counts as expired, as for a sender whose clock is far behind. Read on every
    /// request, so it applies to open connections too.
    public var tokenMaxAgeSeconds: Int?

    public init(
        goawayAfterStreams: Int? = nil, goawayReason: String? = nil, closeAfterRequests: Int? = nil,
        idleTimeoutMilliseconds: Int? = nil, idleBlackhole: Bool? = nil, tokenMaxAgeSeconds: Int? = nil
    ) {
        self.goawayAfterStreams = goawayAfterStreams
        self.goawayReason = goawayReason
        self.closeAfterRequests = closeAfterRequests
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.idleBlackhole = idleBlackhole
        self.tokenMaxAgeSeconds = tokenMaxAgeSeconds
    }
}
