/// The FCM endpoints' faults and records, for tests in the same process.
extension MockPushServer {
    /// Sets (or with nil removes) the rule for one FCM registration token (case-sensitive).
    /// Rules apply to messages that pass validation.
    public func setFCMRule(forToken token: String, _ rule: MockFCMTokenRule?) {
        core.setFCMRule(forToken: token, rule)
    }

    /// The FCM requests (token exchanges and sends), in order of arrival. `reset()` clears them.
    public func fcmRequests() -> [MockFCMRecordedRequest] {
        core.fcmRequests()
    }

    /// The lifetime (`expires_in`) of access tokens issued from now on, seconds.
    public func setFCMAccessTokenLifetime(seconds: Int64) {
        core.setFCMAccessTokenLifetime(seconds: seconds)
    }

    /// Makes every access token issued so far expire now: their next send gets 401 UNAUTHENTICATED.
    public func expireFCMAccessTokens() {
        core.expireFCMAccessTokens()
    }
}
