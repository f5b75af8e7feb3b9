/// What a sender does with the connection that carried an answer.
public enum ConnectionAction: Sendable, Hashable {
    /// Keep using it.
    case keep
    /// Stop adding streams, let in-flight ones finish, close it and open a new one.
    case reopen
    /// Like ``reopen``, after asking the token manager for a new token (once per failed token).
    case renewTokenAndReopen

    /// The action for an answer with this status and reason (apns.md's table).
    ///
    /// `IdleTimeout`, `ExpiredProviderToken`, `TooManyProviderTokenUpdates`,
    /// `UnrelatedKeyIdInToken`, `InternalServerError`, `ServiceUnavailable` and `Shutdown`
    /// all say "this connection is done"; everything else leaves it open.
    public static func forAnswer(status: Int, reason: APNsReason?) -> ConnectionAction {
        switch reason {
        case .expiredProviderToken?: return .renewTokenAndReopen
        case .idleTimeout?, .tooManyProviderTokenUpdates?, .unrelatedKeyIdInToken?,
             .internalServerError?, .serviceUnavailable?, .shutdown?:
            return .reopen
        default:
            return status >= 500 ? .reopen : .keep
        }
    }
}
