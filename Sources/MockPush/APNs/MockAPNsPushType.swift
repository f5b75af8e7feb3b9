/// A value of the `apns-push-type` header, with what Apple requires of a request of that type.
///
/// Written from Apple's documentation, not from pushq's code, so that a wrong limit on the
/// sending side shows up as a refused request: "Sending notification requests to APNs"
/// (developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns),
/// table "Header fields for a POST request", row `apns-push-type`; and "Generating a remote
/// notification" (…/usernotifications/generating-a-remote-notification) for payload sizes.
public enum MockAPNsPushType: String, Sendable, CaseIterable, Hashable {
    case alert, background, location, voip, complication, fileprovider, mdm
    case liveactivity, pushtotalk, widgets, controls

    /// What Apple requires `apns-topic` to end with after the bundle id ("" for the bundle id itself).
    ///
    /// Apple, `apns-push-type`: alert and background use the app's bundle id as the topic; the
    /// others append a suffix to it: location `.location-query`, voip `.voip`, complication
    /// `.complication`, fileprovider `.pushkit.fileprovider`, liveactivity
    /// `.push-type.liveactivity`, pushtotalk `.voip-ptt`, widgets `.push-type.widgets`, controls
    /// `.push-type.controls`. mdm uses the topic in the UID attribute of the MDM push
    /// certificate's subject: the mock takes a configured bundle id for it, without suffix.
    public var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: return ""
        case .location: return ".location-query"
        case .voip: return ".voip"
        case .complication: return ".complication"
        case .fileprovider: return ".pushkit.fileprovider"
        case .liveactivity: return ".push-type.liveactivity"
        case .pushtotalk: return ".voip-ptt"
        case .widgets: return ".push-type.widgets"
        case .controls: return ".push-type.controls"
        }
    }

    /// The largest body APNs takes for this type, bytes; a larger one gets 413 `PayloadTooLarge`.
    ///
    /// Apple, "Generating a remote notification": 5 KB (5120 bytes) for Voice over Internet
    /// Protocol (VoIP) notifications, 4 KB (4096 bytes) for every other remote notification.
    public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }

    /// Whether `apns-priority` may be `priority` for this type.
    ///
    /// Apple, `apns-priority`: 10 (send at once), 5 (send by the device's power considerations)
    /// or 1 (power first); `apns-push-type` background: "Always use priority 5. Using priority 10
    /// is an error." Anything else is 400 `BadPriority`.
    public func allows(priority: Int) -> Bool {
        switch priority {
        case 10: return self != .background
        case 5, 1: return true
        default: return false
        }
    }
}
