/// The value of the `apns-push-type` header, with what each type requires.
///
/// The raw values are the strings stored in `pushq.notifications.push_type` and sent
/// to APNs. Each type implies a topic suffix (appended to the bundle id when a row's
/// `topic` is NULL), a default priority and a payload size limit.
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

    /// The largest payload APNs accepts for this push type, in bytes: 5120 for VoIP, 4096 otherwise.
    public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }

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

/// Device-token checks shared by the worker, the CLI and the mock.
public enum DeviceToken {
    /// Whether `token` is a plausible APNs device token: even length, 64 to 200 hex digits.
    public static func isValid(_ token: some StringProtocol) -> Bool {
        let utf8 = token.utf8
        guard utf8.count >= 64, utf8.count <= 200, utf8.count % 2 == 0 else { return false }
        return utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
        }
    }

    /// A shortened form safe for logs and error messages: first 8 hex digits and an ellipsis.
    public static func redacted(_ token: some StringProtocol) -> String {
        String(token.prefix(8)) + "…"
    }
}
