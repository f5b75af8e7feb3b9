import Logging
import PushCore

/// The authorization of one FCM connection: an OAuth access token from the account's
/// ``FCMAccessTokenProvider`` per batch (blocking the connection's thread while no token is
/// usable), and the resend at once, with a new token, of a request FCM answered 401
/// UNAUTHENTICATED, after dropping its token once.
struct FCMAuthorizer: PushAuthorizer {
    let tokens: FCMAccessTokenProvider
    let layout: StreamLayout
    let logger: Logger
    /// The token of this connection's last batch.
    private var current: FCMAccessToken?
    /// The newest token serial FCM accepted (a 200) on this connection.
    private var acceptedSerial = 0

    init(tokens: FCMAccessTokenProvider, layout: StreamLayout, logger: Logger) {
        self.tokens = tokens
        self.layout = layout
        self.logger = logger
    }

    /// A token, or, without one: a refusal that will not pass by itself pauses the credential
    /// with a message saying what to fix; an unreachable token endpoint is a connection failure
    /// (nothing was delivered).
    mutating func authorize(newConnection: Bool) -> Authorization {
        let token: FCMAccessToken
        do throws(FCMTransportError) {
            // Blocks only when no token is usable (first use, after a 401, or a refresh ahead of
            // expiry that has not finished in time).
            token = try tokens.accessTokenBlocking()
        } catch {
            logger.error("no FCM access token", metadata: ["error": "\(error)"])
            if error.isTransient {
                return .refused(.failure(TransportFailure(kind: .connect, message: "cannot get an FCM access token: \(error)")))
            }
            let verdict = error.refusal.map(FCMVerdict.tokenRefused) ?? .pauseCredential(.unauthenticated, message: error.message)
            return .refused(.verdict(.fcm(FCMAnswer(credentialVerdict: verdict))))
        }
        guard layout.fits(token.value) else {
            let message = "the FCM access token granted for \(tokens.account) does not fit an authorization header (more than 4096 bytes)"
            return .refused(.verdict(.fcm(FCMAnswer(credentialVerdict: .pauseCredential(.unauthenticated, message: message)))))
        }
        current = token
        return .bearer(BearerToken(value: token.value, serial: token.serial, issuedAt: 0))
    }

    /// After a 401 UNAUTHENTICATED to a request sent with token `tokenSerial`: drops the token
    /// once (requests in flight with it at the same time find it replaced already) and resends
    /// the request at once, at most twice; a token granted after a 401 and refused too, before
    /// FCM ever accepted it, pauses the credential instead.
    mutating func answered(_ response: inout PushResponse, tokenSerial: Int, tokenIssuedAt: Int64) -> Bool {
        guard let status = response.status else { return false }
        if status == 200 {
            acceptedSerial = max(acceptedSerial, tokenSerial)
            return false
        }
        guard tokenSerial != 0, response.request.resends < 2, response.outcome == .fcm(.refreshAccessToken) else { return false }
        switch invalidate(serial: tokenSerial) {
        case .dropped, .alreadyReplaced:
            response.request.resends += 1
            return true
        case .rejectedAgain where tokenSerial <= acceptedSerial:
            // Fetched after a 401, but FCM accepted it before refusing it now (revoked or
            // expired since): a new token may work, as after any first 401.
            response.request.resends += 1
            return true
        case .rejectedAgain:
            var answer = response.fcm ?? FCMAnswer()
            answer.credentialVerdict = .pauseCredential(.unauthenticated, message: "FCM refused (401 UNAUTHENTICATED) an access token just granted for \(tokens.account): check that the service account is enabled and that the Firebase Cloud Messaging API is enabled for project \(tokens.account.projectID)")
            response.answer = .fcm(answer)
            return false
        }
    }

    /// Drops the token with `serial` if it is still the one in use; a token this connection no
    /// longer carries was replaced already (its serial is older than the cache's).
    private func invalidate(serial: Int) -> FCMAccessTokenCache.Invalidation {
        guard let current, current.serial == serial else { return .alreadyReplaced }
        return tokens.invalidate(current)
    }

    /// FCM condemns no token by its answers but a 401 (``answered(_:tokenSerial:tokenIssuedAt:)``).
    func renew(afterSerial serial: Int) {}
}
