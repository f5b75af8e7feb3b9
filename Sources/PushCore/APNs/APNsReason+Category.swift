extension APNsReason {
    /// Who is to blame for a rejection with this reason, to pick a log level and wording.
    public enum Blame: Sendable, Hashable {
        /// The notification or its token (e.g. `Unregistered`, `TooManyRequests`): normal traffic.
        case notification
        /// pushq sent something it should have refused (e.g. `BadCollapseId`): a bug, validate first.
        case localBug
        /// The deployment is misconfigured (topic, credential, environment): say so loudly.
        case configuration
        /// APNs or the connection (e.g. `InternalServerError`, `ExpiredProviderToken`).
        case server
    }

    /// Who is to blame for a rejection with this reason.
    public var blame: Blame {
        switch self {
        case .badCollapseId, .badExpirationDate, .badMessageId, .badPriority, .duplicateHeaders,
             .invalidPushType, .missingDeviceToken, .payloadEmpty, .payloadTooLarge,
             .badPath, .methodNotAllowed, .missingChannelId, .badChannelId, .missingPushType:
            return .localBug
        case .badTopic, .missingTopic, .topicDisallowed, .invalidProviderToken,
             .missingProviderToken, .badCertificate, .badCertificateEnvironment,
             .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .unrelatedKeyIdInToken, .featureNotEnabled,
             .cannotCreateChannelConfig:
            return .configuration
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken,
             .tooManyRequests, .forbidden, .channelNotRegistered:
            return .notification
        case .idleTimeout, .expiredProviderToken, .tooManyProviderTokenUpdates,
             .internalServerError, .serviceUnavailable, .shutdown, .unknown:
            return .server
        }
    }
}
