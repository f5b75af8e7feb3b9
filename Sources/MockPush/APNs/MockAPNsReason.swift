/// An APNs error `reason` with the HTTP status Apple answers it with.
///
/// From Apple's "Handling notification responses from APNs" (developer.apple.com/documentation/
/// usernotifications/handling-notification-responses-from-apns), table "Values for the APNs
/// JSON reason key", which gives each reason's status code. Answers the mock makes up for a
/// fault can carry any string (``MockAnswer/status(_:reason:)``).
public enum MockAPNsReason: String, Sendable, CaseIterable, Hashable {
    // 400
    case badCollapseId = "BadCollapseId", badDeviceToken = "BadDeviceToken"
    case badExpirationDate = "BadExpirationDate", badMessageId = "BadMessageId"
    case badPriority = "BadPriority", badTopic = "BadTopic"
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic", duplicateHeaders = "DuplicateHeaders"
    case idleTimeout = "IdleTimeout", invalidPushType = "InvalidPushType"
    case missingDeviceToken = "MissingDeviceToken", missingTopic = "MissingTopic"
    case payloadEmpty = "PayloadEmpty", topicDisallowed = "TopicDisallowed"
    // 400, broadcasts and channel management ("Handling error responses from APNs")
    case missingChannelId = "MissingChannelId", badChannelId = "BadChannelId"
    case channelNotRegistered = "ChannelNotRegistered", missingPushType = "MissingPushType"
    case cannotCreateChannelConfig = "CannotCreateChannelConfig", featureNotEnabled = "FeatureNotEnabled"
    // 400, the mock's own: a Live Activity payload without the keys Apple requires for its
    // event. Apple's APNs accepts such a payload and the device drops it silently; the mock
    // refuses it so that a test sees the mistake (``MockLiveActivityRules``).
    case invalidLiveActivityPayload = "MockInvalidLiveActivityPayload"
    // 403
    case badCertificate = "BadCertificate", badCertificateEnvironment = "BadCertificateEnvironment"
    case expiredProviderToken = "ExpiredProviderToken", forbidden = "Forbidden"
    case invalidProviderToken = "InvalidProviderToken", missingProviderToken = "MissingProviderToken"
    case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken", badEnvironmentKeyIdInToken = "BadEnvironmentKeyIdInToken"
    // The same refusal in the spelling APNs also sends.
    case badEnvironmentKeyInToken = "BadEnvironmentKeyInToken"
    // 404, 405, 410, 413
    case badPath = "BadPath", methodNotAllowed = "MethodNotAllowed"
    case expiredToken = "ExpiredToken", unregistered = "Unregistered"
    case payloadTooLarge = "PayloadTooLarge"
    // 429, 500, 503
    case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates", tooManyRequests = "TooManyRequests"
    case internalServerError = "InternalServerError"
    case serviceUnavailable = "ServiceUnavailable", shutdown = "Shutdown"

    /// The HTTP status Apple's table gives this reason.
    public var status: Int {
        switch self {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority,
             .badTopic, .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType,
             .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed,
             .missingChannelId, .badChannelId, .channelNotRegistered, .missingPushType,
             .cannotCreateChannelConfig, .featureNotEnabled, .invalidLiveActivityPayload:
            return 400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
             .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken,
             .badEnvironmentKeyInToken:
            return 403
        case .badPath: return 404
        case .methodNotAllowed: return 405
        case .expiredToken, .unregistered: return 410
        case .payloadTooLarge: return 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: return 429
        case .internalServerError: return 500
        case .serviceUnavailable, .shutdown: return 503
        }
    }
}
