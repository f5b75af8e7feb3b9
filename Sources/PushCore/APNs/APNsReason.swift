/// An APNs error `reason` string, as found in the JSON body of a non-200 answer.
///
/// Unknown strings are kept in `.unknown` so nothing Apple adds later is lost.
public enum APNsReason: Sendable, Hashable {
    case badCollapseId, badDeviceToken, badExpirationDate, badMessageId, badPriority
    case badTopic, deviceTokenNotForTopic, duplicateHeaders, idleTimeout, invalidPushType
    case missingDeviceToken, missingTopic, payloadEmpty, topicDisallowed
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden
    case invalidProviderToken, missingProviderToken, unrelatedKeyIdInToken, badEnvironmentKeyIdInToken
    /// `BadEnvironmentKeyInToken`: ``badEnvironmentKeyIdInToken`` in the other spelling APNs sends.
    case badEnvironmentKeyInToken
    case badPath, methodNotAllowed, expiredToken, unregistered, payloadTooLarge
    case tooManyProviderTokenUpdates, tooManyRequests, internalServerError
    case serviceUnavailable, shutdown
    // Broadcast sends and channel management (iOS 18 broadcast push notifications).
    case missingChannelId, badChannelId, channelNotRegistered, missingPushType
    case cannotCreateChannelConfig, featureNotEnabled
    case unknown(String)

    /// Every known reason, in the order of Apple's table (the broadcast and channel reasons of
    /// "Handling error responses from APNs" last).
    public static let known: [APNsReason] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority,
        .badTopic, .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType,
        .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed,
        .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden,
        .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken,
        .badPath, .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError,
        .serviceUnavailable, .shutdown,
        .missingChannelId, .badChannelId, .channelNotRegistered, .missingPushType,
        .cannotCreateChannelConfig, .featureNotEnabled,
    ]

    public init(_ string: String) {
        self = APNsReason.byString[string] ?? .unknown(string)
    }

    private static let byString: [String: APNsReason] = {
        var map: [String: APNsReason] = [:]
        for reason in known { map[reason.rawValue] = reason }
        return map
    }()

    /// The string APNs uses, e.g. `"BadDeviceToken"`.
    public var rawValue: String {
        switch self {
        case .badCollapseId: return "BadCollapseId"
        case .badDeviceToken: return "BadDeviceToken"
        case .badExpirationDate: return "BadExpirationDate"
        case .badMessageId: return "BadMessageId"
        case .badPriority: return "BadPriority"
        case .badTopic: return "BadTopic"
        case .deviceTokenNotForTopic: return "DeviceTokenNotForTopic"
        case .duplicateHeaders: return "DuplicateHeaders"
        case .idleTimeout: return "IdleTimeout"
        case .invalidPushType: return "InvalidPushType"
        case .missingDeviceToken: return "MissingDeviceToken"
        case .missingTopic: return "MissingTopic"
        case .payloadEmpty: return "PayloadEmpty"
        case .topicDisallowed: return "TopicDisallowed"
        case .badCertificate: return "BadCertificate"
        case .badCertificateEnvironment: return "BadCertificateEnvironment"
        case .expiredProviderToken: return "ExpiredProviderToken"
        case .forbidden: return "Forbidden"
        case .invalidProviderToken: return "InvalidProviderToken"
        case .missingProviderToken: return "MissingProviderToken"
        case .unrelatedKeyIdInToken: return "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIdInToken: return "BadEnvironmentKeyIdInToken"
        case .badEnvironmentKeyInToken: return "BadEnvironmentKeyInToken"
        case .badPath: return "BadPath"
        case .methodNotAllowed: return "MethodNotAllowed"
        case .expiredToken: return "ExpiredToken"
        case .unregistered: return "Unregistered"
        case .payloadTooLarge: return "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: return "TooManyProviderTokenUpdates"
        case .tooManyRequests: return "TooManyRequests"
        case .internalServerError: return "InternalServerError"
        case .serviceUnavailable: return "ServiceUnavailable"
        case .shutdown: return "Shutdown"
        case .missingChannelId: return "MissingChannelId"
        case .badChannelId: return "BadChannelId"
        case .channelNotRegistered: return "ChannelNotRegistered"
        case .missingPushType: return "MissingPushType"
        case .cannotCreateChannelConfig: return "CannotCreateChannelConfig"
        case .featureNotEnabled: return "FeatureNotEnabled"
        case .unknown(let s): return s
        }
    }
}
