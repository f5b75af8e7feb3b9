/// The FCM side of the mock's shared state: access tokens issued, per-token rules, records.
/// Lives inside `MockSharedState`, under the server's lock.
struct MockFCMState {
    struct AccessToken {
        var clientEmail: String
        var projectID: String
        var expiresAt: Int64
        var serial: Int
    }

    var accessTokens: [String: AccessToken] = [:]
    var issued = 0
    var lifetimeSeconds: Int64
    var rules: [String: MockRuleProgress<MockFCMAnswer>] = [:]
    var records: [MockFCMRecordedRequest] = []
    var messagesSent = 0

    init(configuration: MockFCMConfiguration) {
        lifetimeSeconds = configuration.accessTokenLifetimeSeconds
    }

    /// Issues an access token for `account` valid ``lifetimeSeconds`` from `now`.
    mutating func issue(for account: MockFCMServiceAccount, now: Int64, random: UInt64) -> (value: String, expiresIn: Int64) {
        issued += 1
        let value = "ya29.mock-\(issued)-" + String(random, radix: 16)
        accessTokens[value] = AccessToken(clientEmail: account.clientEmail, projectID: account.projectID,
                                          expiresAt: now + lifetimeSeconds, serial: issued)
        return (value, lifetimeSeconds)
    }

    /// The token `value` names if it is known and not expired at `now`.
    func accessToken(_ value: String, now: Int64) -> AccessToken? {
        guard let token = accessTokens[value], now < token.expiresAt else { return nil }
        return token
    }

    /// Makes every access token issued so far expire at `now`, as if an hour had passed.
    mutating func expireAll(now: Int64) {
        for key in accessTokens.keys { accessTokens[key]?.expiresAt = now }
    }

    /// The answer for a valid message to `token`: its rule's next answer, else normal.
    mutating func answer(forRegistrationToken token: String) -> MockFCMAnswer {
        rules[token]?.next() ?? .normal
    }
}

extension MockSharedState {
    /// Keeps an FCM record, under the same switches and cap as APNs records
    /// (`recordRequests`, `maxRecordedRequests`; `recordBodies` for the body).
    mutating func recordFCM(_ record: MockFCMRecordedRequest) {
        guard recordRequests, fcm.records.count < maxRecordedRequests else { return }
        var record = record
        if !recordBodies { record.body = nil }
        fcm.records.append(record)
    }
}
