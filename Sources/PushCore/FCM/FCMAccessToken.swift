/// An OAuth 2.0 access token for FCM, as the token endpoint granted it.
///
/// `description` never shows ``value``.
public struct FCMAccessToken: Sendable, Hashable, CustomStringConvertible {
    /// The bearer token. Secret: never log it.
    public let value: String
    /// When it stops working, UNIX seconds (grant time + `expires_in`).
    public let expiresAt: Int64
    /// 1 for the first token a cache held, 2 for the next...
    public let serial: Int
    /// Whether it was fetched because the previous one got 401 UNAUTHENTICATED.
    public let replacedRejected: Bool

    public init(value: String, expiresAt: Int64, serial: Int, replacedRejected: Bool = false) {
        self.value = value
        self.expiresAt = expiresAt
        self.serial = serial
        self.replacedRejected = replacedRejected
    }

    public var description: String { "FCM access token #\(serial) (expires at \(expiresAt))" }

    /// Whether `value` can go into an `authorization: Bearer` header as it is:
    /// 1 to 4096 visible ASCII characters.
    public static func isValidValue(_ value: String) -> Bool {
        let u = value.utf8
        return !u.isEmpty && u.count <= 4096 && u.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }
}

/// When to fetch a new FCM access token: the pure state of one credential's token cache.
///
/// - A token is used until ``refreshMargin`` before it expires; from then on the first
///   caller starts a refresh in the background and keeps using the old token, which is
///   still good, until ``minimumValidity`` before expiry; after that callers wait.
/// - One refresh at a time (single flight): while one runs, callers that have no usable
///   token wait for it (``Decision/wait``) instead of starting another.
/// - A 401 UNAUTHENTICATED drops the token it was sent with, once: ``invalidate(_:)`` on
///   a token that is no longer the current one does nothing, however many requests failed
///   with it at the same time.
/// - A failed refresh is not repeated for ``retryAfterFailure`` seconds: callers without a
///   usable token get ``Decision/failed`` at once.
///
/// Time is the caller's (UNIX seconds), so tests drive hours without sleeping.
/// `PushTransport.FCMAccessTokenProvider` keeps one behind a lock and does the I/O.
public struct FCMAccessTokenCache: Sendable, Hashable {
    /// What a caller wanting a token should do.
    public enum Decision: Sendable, Hashable {
        /// Use this token.
        case use(FCMAccessToken)
        /// Use this token, and start the refresh (the caller is the one to start it).
        case useAndRefresh(FCMAccessToken)
        /// No usable token: start the refresh and wait for it.
        case refresh
        /// No usable token and a refresh is running: wait for it.
        case wait
        /// The last refresh failed less than ``retryAfterFailure`` ago: report its error.
        case failed
    }

    /// What ``invalidate(_:)`` did.
    public enum Invalidation: Sendable, Hashable {
        /// The token was current and is dropped: the next caller refreshes.
        case dropped
        /// The token had been replaced or dropped already: nothing to do, resend.
        case alreadyReplaced
        /// The token was itself fetched after a 401 and is refused too: dropped, but
        /// refreshing again will not help — pause the credential.
        case rejectedAgain
    }

    /// Seconds before expiry at which a refresh starts. Defaults to 300.
    public let refreshMargin: Int64
    /// A token closer than this to expiry is not handed out (it could expire in flight). Defaults to 60.
    public let minimumValidity: Int64
    /// Seconds after a failed refresh before another is tried. Defaults to 30.
    public let retryAfterFailure: Int64

    public private(set) var token: FCMAccessToken?
    public private(set) var refreshing = false
    private var lastFailureAt: Int64?
    private var lastSerial = 0
    /// Whether the refresh running was caused by a 401.
    private var refreshAfterRejection = false

    public init(refreshMargin: Int64 = 300, minimumValidity: Int64 = 60, retryAfterFailure: Int64 = 30) {
        precondition(refreshMargin >= minimumValidity && minimumValidity >= 0 && retryAfterFailure >= 0)
        self.refreshMargin = refreshMargin
        self.minimumValidity = minimumValidity
        self.retryAfterFailure = retryAfterFailure
    }

    /// Decides what a caller wanting a token at `now` does; marks a refresh as started
    /// when the decision is ``Decision/refresh`` or ``Decision/useAndRefresh(_:)``.
    public mutating func next(now: Int64) -> Decision {
        let recentlyFailed = lastFailureAt.map { now - $0 < retryAfterFailure } ?? false
        if let token, now < token.expiresAt - minimumValidity {
            if now < token.expiresAt - refreshMargin || refreshing || recentlyFailed { return .use(token) }
            refreshing = true
            return .useAndRefresh(token)
        }
        if refreshing { return .wait }
        if recentlyFailed { return .failed }
        refreshing = true
        return .refresh
    }

    /// Records a granted token and returns it; ends the refresh.
    public mutating func refreshed(value: String, expiresIn: Int64, now: Int64) -> FCMAccessToken {
        lastSerial += 1
        let granted = FCMAccessToken(value: value, expiresAt: now + expiresIn, serial: lastSerial,
                                     replacedRejected: refreshAfterRejection)
        token = granted
        refreshing = false
        refreshAfterRejection = false
        lastFailureAt = nil
        return granted
    }

    /// Records a failed refresh; ends it. A token still good stays in use.
    public mutating func refreshFailed(now: Int64) {
        refreshing = false
        lastFailureAt = now
    }

    /// After a 401 UNAUTHENTICATED to a request sent with `rejected`.
    public mutating func invalidate(_ rejected: FCMAccessToken) -> Invalidation {
        guard let current = token, current.serial == rejected.serial else { return .alreadyReplaced }
        token = nil
        lastFailureAt = nil
        refreshAfterRejection = true
        return current.replacedRejected ? .rejectedAgain : .dropped
    }
}
