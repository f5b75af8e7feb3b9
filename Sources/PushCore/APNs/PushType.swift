/// The value of the `apns-push-type` header, with what each type requires.
///
/// The raw values are the strings stored in `pushq.notifications.push_type` and sent
/// to APNs. Each type implies a topic suffix (appended to the bundle id when a row's
/// `topic` is NULL) and a default priority. (Payload limits are the schema's CHECK constraints.)
public enum PushType: String, Sendable, CaseIterable, Hashable {
    case alert, background, location, voip, complication, fileprovider, mdm
    case liveactivity, pushtotalk, widgets, controls

    /// The suffix APNs requires on `apns-topic` for this push type ("" for none).
    ///
    /// `mdm` uses the MDM certificate's own topic, so it has no suffix.
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: return ""
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .liveactivity: return ".push-type.liveactivity"
        case .widgets: return ".push-type.widgets"
        case .controls: return ".push-type.controls"
        case .location: return ".location-query"
        case .pushtotalk: return ".voip-ptt"
        }
    }

    /// The priority used when a row's `priority` is NULL: 5 for `background`, 10 otherwise.
    public var defaultPriority: Int { self == .background ? 5 : 10 }

    /// The topic to send: `topic` as given, or the default topic plus this type's suffix; nil
    /// when there is neither.
    ///
    /// - Parameters:
    ///   - explicit: the row's `topic` column; used verbatim when not nil.
    ///   - defaultTopic: the credential's bundle id, nil if it has none.
    public func topic(explicit: String?, defaultTopic: String?) -> String? {
        explicit ?? defaultTopic.map { $0 + topicSuffix }
    }
}

/// The APNs environment a token belongs to, and so the host a request goes to.
public enum APNsEnvironment: String, Sendable, CaseIterable, Hashable {
    case production, development

    /// Apple's base URL for this environment.
    public var baseURL: String {
        switch self {
        case .production: return "https://api.push.apple.com"
        case .development: return "https://api.sandbox.push.apple.com"
        }
    }
}

extension APNsEnvironment {
    /// Apple's channel-management host for this environment, port included
    /// ("Sending channel management requests to APNs"): broadcast channels are created, read,
    /// listed and deleted there; broadcasts themselves go to ``baseURL``.
    public var channelManagementURL: String {
        switch self {
        case .production: return "https://api-manage-broadcast.push.apple.com:2196"
        case .development: return "https://api-manage-broadcast.sandbox.push.apple.com:2195"
        }
    }
}
