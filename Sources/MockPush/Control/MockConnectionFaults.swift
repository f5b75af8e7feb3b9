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
