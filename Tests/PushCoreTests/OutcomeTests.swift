import PushCore
import Testing

@Suite struct OutcomeTests {
    /// apns.md's table, row by row: (status, reason) → expected outcome.
    static let table: [(Int, APNsReason, Outcome)] = [
        (400, .badDeviceToken, .invalidateToken(reason: .badDeviceToken, at: nil)),
        (400, .deviceTokenNotForTopic, .fail(.deviceTokenNotForTopic)),
        (400, .badCollapseId, .fail(.badCollapseId)),
        (400, .badExpirationDate, .fail(.badExpirationDate)),
        (400, .badMessageId, .fail(.badMessageId)),
        (400, .badPriority, .fail(.badPriority)),
        (400, .duplicateHeaders, .fail(.duplicateHeaders)),
        (400, .invalidPushType, .fail(.invalidPushType)),
        (400, .missingDeviceToken, .fail(.missingDeviceToken)),
        (400, .payloadEmpty, .fail(.payloadEmpty)),
        (400, .badTopic, .fail(.badTopic)),
        (400, .missingTopic, .fail(.missingTopic)),
        (400, .topicDisallowed, .fail(.topicDisallowed)),
        (400, .missingChannelId, .fail(.missingChannelId)),
        (400, .badChannelId, .fail(.badChannelId)),
        (400, .channelNotRegistered, .fail(.channelNotRegistered)),
        (400, .missingPushType, .fail(.missingPushType)),
        (400, .cannotCreateChannelConfig, .fail(.cannotCreateChannelConfig)),
        (400, .featureNotEnabled, .fail(.featureNotEnabled)),
        (400, .idleTimeout, .retry(.idleTimeout)),
        (403, .expiredProviderToken, .retryNow(.renewProviderToken)),
        (403, .invalidProviderToken, .pauseCredential("InvalidProviderToken")),
        (403, .missingProviderToken, .pauseCredential("MissingProviderToken")),
        (403, .badCertificate, .pauseCredential("BadCertificate")),
        (403, .badCertificateEnvironment, .pauseCredential("BadCertificateEnvironment")),
        (403, .badEnvironmentKeyIdInToken, .pauseCredential("BadEnvironmentKeyIdInToken")),
        (403, .badEnvironmentKeyInToken, .pauseCredential("BadEnvironmentKeyInToken")),
        (403, .unrelatedKeyIdInToken, .retryNow(.freshConnection(.unrelatedKeyIdInToken))),
        (403, .forbidden, .fail(.forbidden)),
        (404, .badPath, .fail(.badPath)),
        (405, .methodNotAllowed, .fail(.methodNotAllowed)),
        (410, .unregistered, .invalidateToken(reason: .unregistered, at: 1_700_000_000_123)),
        (410, .expiredToken, .invalidateToken(reason: .expiredToken, at: 1_700_000_000_123)),
        (413, .payloadTooLarge, .fail(.payloadTooLarge)),
        (429, .tooManyRequests, .retry(.tooManyRequests)),
        (429, .tooManyProviderTokenUpdates, .retryNow(.freshConnection(.tooManyProviderTokenUpdates))),
        (500, .internalServerError, .retry(.serverError(.internalServerError))),
        (503, .serviceUnavailable, .retry(.serverError(.serviceUnavailable))),
        (503, .shutdown, .retryNow(.freshConnection(.shutdown))),
    ]

    @Test func tableCoversEveryKnownReason() {
        let covered = Set(Self.table.map { $0.1 })
        #expect(covered == Set(APNsReason.known))
    }

    @Test(arguments: 0..<table.count)
    func classifiesReason(row: Int) {
        let (status, reason, expected) = Self.table[row]
        #expect(Outcome.classify(status: status, reason: reason, timestamp: 1_700_000_000_123) == expected,
                "\(reason.rawValue)")
    }

    @Test func okIsSentWhateverTheBody() {
        #expect(Outcome.classify(status: 200, reason: nil) == .sent)
        #expect(Outcome.classify(status: 200, reason: .badTopic) == .sent)
    }

    @Test func unknownReasonsRetryAFewTimes() {
        let outcome = Outcome.classify(status: 400, reason: APNsReason("SomethingNew"))
        #expect(outcome == .retry(.unknownReason("SomethingNew")))
        #expect(!Self.disposition(outcome).refundsAttempt)
        guard case .retry(let kind) = outcome else { Issue.record("not a retry"); return }
        #expect(kind.attemptLimit == 3)
        #expect(Outcome.classify(status: 502, reason: APNsReason("BadGateway")) == .retry(.serverError(.unknown("BadGateway"))))
    }

    @Test func missingReasonGoesByStatus() {
        #expect(Outcome.classify(status: 410, reason: nil, timestamp: 5) == .invalidateToken(reason: .unregistered, at: 5))
        #expect(Outcome.classify(status: 429, reason: nil) == .retry(.tooManyRequests))
        #expect(Outcome.classify(status: 502, reason: nil) == .retry(.serverError(nil)))
        #expect(Outcome.classify(status: 418, reason: nil) == .retry(.unknownReason("HTTP418")))
    }

    @Test func transportFailuresAreOutcomeUnknown() {
        for kind in [TransportFailure.Kind.timeout, .connect, .tls, .connectionLost, .cancelled, .other] {
            let outcome = Outcome.classify(TransportFailure(kind: kind, code: 16, message: "x"))
            #expect(outcome == .retry(.outcomeUnknown(kind)))
            // Retried; the attempt counts unless the request cannot have reached APNs (connect, TLS).
            // (Outcome.consumesAttempt, removed, said it always counted: the Disposition never agreed.)
            #expect(Self.disposition(outcome).status == .retrying)
            #expect(Self.disposition(outcome).refundsAttempt == (kind == .connect || kind == .tls), "\(kind)")
        }
        let cert = Outcome.classify(TransportFailure(kind: .clientCertificate, code: 58, message: "bad p12"))
        #expect(cert == .pauseCredential("ClientCertificateUnusable"))
        #expect(Self.disposition(cert).refundsAttempt)
    }

    /// Transport failures that are not the network's: (kind, outcome, health signal, final).
    static let localFailures: [(TransportFailure.Kind, Outcome, EndpointHealth.Signal, Bool)] = [
        (.invalidHeader, .failLocally("InvalidHeader"), .none, true),
        (.signingFailed, .pauseCredential("ProviderTokenSigningFailed"), .none, false),
        (.clientCertificate, .pauseCredential("ClientCertificateUnusable"), .none, false),
        (.clientCertificateExpired, .pauseCredential("ClientCertificateExpired"), .none, false),
    ]

    @Test(arguments: 0..<localFailures.count)
    func localFailureIsNeverATransportRetry(row: Int) {
        let (kind, expected, signal, final) = Self.localFailures[row]
        let outcome = Outcome.classify(TransportFailure(kind: kind, message: "x"))
        #expect(outcome == expected)
        #expect(outcome.healthSignal == signal)
        #expect((Self.disposition(outcome).status != .retrying) == final)
        #expect(!outcome.deliveredNothing)
    }

    @Test func invalidHeaderEndsTheRowFailedWithoutARetry() {
        let policy = RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300)
        let d = Disposition.decide(outcome: .failLocally("InvalidHeader"), reason: "InvalidHeader", attempts: 1, maxAttempts: 10,
                                   lastReason: nil, policy: policy, unitRandom: { 0.5 })
        #expect(d == Disposition(status: .failed, reason: "InvalidHeader"))
    }

    /// What the worker writes back after `outcome` on a first attempt of ten: whether the row is
    /// done with (not `retrying`) and whether the attempt is given back are the Disposition's.
    static func disposition(_ outcome: Outcome) -> Disposition {
        Disposition.decide(outcome: outcome, reason: "x", attempts: 1, maxAttempts: 10, lastReason: nil,
                           policy: RetryPolicy(baseSeconds: 1, capSeconds: 600, throttleDelaySeconds: 300), unitRandom: { 0.5 })
    }

    @Test func attemptAccounting() {
        #expect(Self.disposition(.retryNow(.renewProviderToken)).refundsAttempt)
        #expect(Self.disposition(.retryNow(.freshConnection(.shutdown))).refundsAttempt)
        #expect(Self.disposition(.pauseCredential("BadCertificate")).refundsAttempt)
        #expect(!Self.disposition(.retry(.tooManyRequests)).refundsAttempt)
        #expect(Self.disposition(.fail(.badTopic)) == Disposition(status: .failed, reason: "BadTopic"))
        #expect(Self.disposition(.sent).status == .sent && !Self.disposition(.sent).refundsAttempt)
    }

    @Test func burstSuspects() {
        #expect(Outcome.classify(status: 400, reason: .badDeviceToken).isBurstSuspect)
        #expect(Outcome.classify(status: 400, reason: .deviceTokenNotForTopic).isBurstSuspect)
        #expect(!Outcome.classify(status: 410, reason: .unregistered).isBurstSuspect)
    }

    @Test func connectionActions() {
        #expect(ConnectionAction.forAnswer(status: 200, reason: nil) == .keep)
        #expect(ConnectionAction.forAnswer(status: 400, reason: .badDeviceToken) == .keep)
        #expect(ConnectionAction.forAnswer(status: 410, reason: .unregistered) == .keep)
        #expect(ConnectionAction.forAnswer(status: 403, reason: .expiredProviderToken) == .renewTokenAndReopen)
        for (status, reason) in [(400, APNsReason.idleTimeout), (429, .tooManyProviderTokenUpdates), (403, .unrelatedKeyIdInToken),
                                 (500, .internalServerError), (503, .serviceUnavailable), (503, .shutdown)] {
            #expect(ConnectionAction.forAnswer(status: status, reason: reason) == .reopen)
        }
        #expect(ConnectionAction.forAnswer(status: 502, reason: nil) == .reopen)
    }
}
