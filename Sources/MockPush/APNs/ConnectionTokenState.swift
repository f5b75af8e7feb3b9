/// The provider token a connection uses, and Apple's per-connection rules about it.
///
/// Pure: `admit` decides from the request's `authorization` value, the mock clock and
/// a verification function; the connection handler carries out the answer.
/// Rules: a token must verify and be no older than `maxAgeSeconds` (Apple: 60 minutes,
/// re-checked on every request, also for the token the connection already uses); a connection keeps
/// one `kid` (a change → `UnrelatedKeyIdInToken`); it may move to a new token only
/// 20 minutes or more after it started using the current one (sooner →
/// `TooManyProviderTokenUpdates`, and the connection keeps its current token).
struct ConnectionTokenState {
    enum Admission: Equatable {
        /// Accepted. `switched`: the connection moved to this token from an earlier one.
        case accepted(VerifiedJWT, switched: Bool)
        case rejected(MockAPNsReason, Violation?)
    }

    enum Violation: Equatable {
        case switchTooSoon, keyIDChanged
    }

    private(set) var current: String?
    private(set) var currentJWT: VerifiedJWT?
    private(set) var since: Int64 = 0

    mutating func admit(
        authorization: String,
        now: Int64,
        maxAgeSeconds: Int64 = MockAPNsRules.providerTokenMaxAgeSeconds,
        verifier: JWTVerifier
    ) -> Admission {
        if let current, let currentJWT, current == authorization {
            if let reason = verifier.checkAge(currentJWT, now: now, maxAgeSeconds: maxAgeSeconds) { return .rejected(reason, nil) }
            return .accepted(currentJWT, switched: false)
        }
        guard authorization.utf8.count > 7,
              authorization.prefix(7).lowercased() == "bearer "
        else { return .rejected(.invalidProviderToken, nil) }
        let jwt: VerifiedJWT
        switch verifier.verify(authorization.dropFirst(7)) {
        case .failure(let reason): return .rejected(reason, nil)
        case .success(let verified): jwt = verified
        }
        if let reason = verifier.checkAge(jwt, now: now, maxAgeSeconds: maxAgeSeconds) { return .rejected(reason, nil) }
        var switched = false
        if let currentJWT {
            if currentJWT.keyID != jwt.keyID { return .rejected(.unrelatedKeyIdInToken, .keyIDChanged) }
            if now - since < MockAPNsRules.providerTokenMinimumSwitchSeconds {
                return .rejected(.tooManyProviderTokenUpdates, .switchTooSoon)
            }
            switched = true
        }
        current = authorization
        currentJWT = jwt
        since = now
        return .accepted(jwt, switched: switched)
    }
}
