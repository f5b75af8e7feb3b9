import PushCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Mints and rotates the APNs provider tokens (ES256 JWTs) of one (team, key).
///
/// Implements apns.md's rule, which keeps every connection within both of APNs' limits
/// (a token older than 60 minutes is `ExpiredProviderToken`; a connection switching tokens
/// more often than every 20 minutes gets `TooManyProviderTokenUpdates`):
/// - at most one new token is minted every ``mintInterval`` (25 minutes by default);
/// - a connection takes ``newest()`` when it opens and calls ``refresh(_:)`` before using
///   its token, which switches only once the token is ``switchAge`` old (50 minutes);
/// - after `ExpiredProviderToken`, ``renew(after:)`` mints once, however many streams failed
///   with the same token at the same time.
///
/// Share one manager between every sender using the same key. Time comes from the
/// injected `clock` (UNIX seconds), so tests drive hours of rotation without sleeping.
/// The signing key and the tokens are never logged or put in errors.
public final class ProviderTokenManager: Sendable {
    /// A signed token and when it was issued.
    public struct Token: Sendable, Hashable {
        /// The JWT. Secret: never log it.
        public let value: String
        /// Its `iat`, UNIX seconds.
        public let issuedAt: Int64
        /// 1 for the first token this manager minted, 2 for the next...
        public let serial: Int
    }

    /// The team id (`iss`).
    public let teamID: String
    /// The key id (`kid`).
    public let keyID: String
    /// Minimum time between two mints, in seconds. Defaults to 1500 (25 minutes).
    public let mintInterval: Int64
    /// Age, in seconds, at which a connection switches to a newer token. Defaults to 3000 (50 minutes).
    public let switchAge: Int64

    private let key: ES256PrivateKey
    private let clock: @Sendable () -> Int64
    private let state = Mutex<Token?>(nil)

    /// The wall clock in UNIX seconds.
    public static let systemClock: @Sendable () -> Int64 = { Int64(time(nil)) }

    /// - Parameters:
    ///   - teamID: 10-character team id.
    ///   - keyID: 10-character key id of `key`.
    ///   - key: the `.p8` key.
    ///   - mintInterval: defaults to 1500 s.
    ///   - switchAge: defaults to 3000 s; must stay under 3600 and above `mintInterval` + 1200.
    ///   - clock: UNIX seconds; defaults to the wall clock.
    /// - Throws: ``PushTransportError`` `.configuration` for malformed ids or intervals.
    public init(teamID: String, keyID: String, key: ES256PrivateKey,
                mintInterval: Int64 = 1500, switchAge: Int64 = 3000,
                clock: @escaping @Sendable () -> Int64 = ProviderTokenManager.systemClock) throws {
        guard ProviderTokenClaims.isValidID(teamID) else {
            throw PushTransportError(.configuration, "PUSHQ_APNS_TEAM_ID must be letters and digits (Apple's 10-character team id)")
        }
        guard ProviderTokenClaims.isValidID(keyID) else {
            throw PushTransportError(.configuration, "PUSHQ_APNS_KEY_ID must be letters and digits (Apple's 10-character key id)")
        }
        guard switchAge < 3600, mintInterval > 0, switchAge - mintInterval >= 1200 else {
            throw PushTransportError(.configuration, "token switch age \(switchAge)s must be under 3600s and at least 1200s above the mint interval \(mintInterval)s")
        }
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
        self.mintInterval = mintInterval
        self.switchAge = switchAge
        self.clock = clock
    }

    /// Loads the key from a `.p8` file.
    public convenience init(teamID: String, keyID: String, keyFile: String,
                            clock: @escaping @Sendable () -> Int64 = ProviderTokenManager.systemClock) throws {
        try self.init(teamID: teamID, keyID: keyID, key: ES256PrivateKey(file: keyFile), clock: clock)
    }

    /// The current time of the injected clock.
    public func now() -> Int64 { clock() }

    /// The token a connection should take when it opens: the newest one, minted now if
    /// there is none, the newest is ``mintInterval`` old, or its `iat` is after now (the
    /// host's clock went back: ``ProviderTokenAge``).
    public func newest() throws -> Token {
        let now = clock()
        return try state.withLock { current in
            if let token = current, !ProviderTokenAge.needsReplacing(issuedAt: token.issuedAt, now: now, limit: mintInterval) { return token }
            let token = try mint(now: now, serial: (current?.serial ?? 0) + 1)
            current = token
            return token
        }
    }

    /// The token a connection holding `token` should use now: `token` itself until it is
    /// ``switchAge`` old (or issued after now, the clock having gone back), then ``newest()``.
    public func refresh(_ token: Token) throws -> Token {
        if !ProviderTokenAge.needsReplacing(issuedAt: token.issuedAt, now: clock(), limit: switchAge) { return token }
        return try newest()
    }

    /// After APNs answered `ExpiredProviderToken` to `failed`: mints a new token if `failed`
    /// is still the newest, otherwise returns the newest (someone renewed already).
    public func renew(after failed: Token) throws -> Token {
        try renew(afterSerial: failed.serial)
    }

    /// ``renew(after:)`` for the token with this ``Token/serial``.
    public func renew(afterSerial failed: Int) throws -> Token {
        let now = clock()
        return try state.withLock { current in
            if let token = current, token.serial != failed { return token }
            let token = try mint(now: now, serial: (current?.serial ?? 0) + 1)
            current = token
            return token
        }
    }

    /// How many tokens this manager has minted.
    public var mintedCount: Int { state.withLock { $0?.serial ?? 0 } }

    private func mint(now: Int64, serial: Int) throws -> Token {
        let claims = ProviderTokenClaims(keyID: keyID, teamID: teamID, issuedAt: now)
        let signature = try key.sign(Array(claims.signingInput.utf8))
        return Token(value: claims.token(rawSignature: signature), issuedAt: now, serial: serial)
    }
}
