/// The `apns-*` headers of one request to APNs (``ProviderFields/apns(_:)``).
///
/// A request goes to one device token (`POST /3/device/<token>`), or, when ``channelID`` is
/// set, to every device subscribed to an iOS 18 broadcast channel (`POST
/// /4/broadcasts/apps/<bundle id>` with `apns-channel-id`, on the same host). A broadcast
/// carries no `apns-topic` (its bundle id is in the path), sends ``apnsID`` as
/// `apns-request-id`, and always carries `apns-expiration` (0 when the request has no
/// expiration).
///
/// Sent as they are, except for what would break the request itself: a value holding a
/// control character, or longer than ``Limit`` allows, is refused before anything is sent
/// (``problem(deviceToken:)``, then `TransportFailure.Kind.invalidHeader`). The rest of
/// validation (token format, payload size, priority for `background`) is the producer's and
/// the table's, because APNs answers a bad value with a rejection that slows the connection down.
public struct APNsHeaders: Sendable, Hashable {
    /// `apns-push-type`.
    public var pushType: PushType
    /// `apns-topic`, suffix included; for a broadcast (``channelID`` set), the bundle id of the
    /// path, without suffix, and no `apns-topic` header.
    public var topic: String
    /// `apns-priority`: 10, 5 or 1.
    public var priority: Int
    /// `apns-collapse-id`, nil for no header.
    public var collapseID: String?
    /// `apns-id`: a lowercase canonical UUID, the same for every attempt; sent as
    /// `apns-request-id` by a broadcast.
    public var apnsID: String
    /// `apns-channel-id`: the broadcast channel this request goes to instead of a device token
    /// (the id APNs gave when the channel was created); nil for a request to a device.
    public var channelID: String?

    public init(pushType: PushType, topic: String, priority: Int, collapseID: String? = nil, apnsID: String,
                channelID: String? = nil) {
        self.pushType = pushType
        self.topic = topic
        self.priority = priority
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.channelID = channelID
    }

    /// Whether this request goes to a broadcast channel (``channelID`` set).
    public var isBroadcast: Bool { channelID != nil }

    /// The longest value the sender puts in each header, in bytes. A stream's header nodes are
    /// sized from these, so a request within them always fits.
    public enum Limit {
        /// `apns-topic`: a bundle id (`pushq.notifications` allows 255 bytes) plus the push
        /// type's suffix (at most 23 bytes).
        public static let topic = 320
        /// `apns-collapse-id`: APNs' own limit.
        public static let collapseID = 64
        /// `apns-id` (a canonical UUID is 36).
        public static let apnsID = 64
        /// The device token, sent in the `:path`.
        public static let deviceToken = 200
        /// `apns-channel-id`. Apple documents a base64 string and no length: this is pushq's
        /// bound (the ids APNs gives are far shorter).
        public static let channelID = 256
        /// `apns-priority` in decimal, sign included.
        public static let priorityDigits = 10
        /// The priorities whose decimal form fits ``priorityDigits``.
        public static let priority: ClosedRange<Int> = -999_999_999...9_999_999_999
    }

    /// Why these headers, sent to `deviceToken`, cannot be sent as they are, or nil if they can.
    ///
    /// A header value (topic, collapse id, apns-id) must hold no control character (CR, LF,
    /// NUL or any other byte below 0x20, or 0x7F) and stay within ``Limit``; the device token
    /// must be 1 to ``Limit/deviceToken`` visible ASCII characters other than `/`, `?` and `#`
    /// (it becomes the request path). The check reads the bytes in place and allocates nothing
    /// unless it finds a problem.
    /// For a broadcast, the channel id must hold no control character and stay within
    /// ``Limit/channelID``, and the bundle id (``topic``) must be a path segment; the device
    /// token is not used.
    public func problem(deviceToken: String) -> String? {
        if let channelID {
            guard !channelID.isEmpty, Self.isHeaderValue(channelID, limit: Limit.channelID) else {
                return "apns-channel-id is empty, holds a control character or is longer than \(Limit.channelID) bytes"
            }
            return Self.isPathSegment(topic, limit: Limit.topic)
                ? commonProblem() : "the bundle id is empty, too long or holds a character that cannot be in a request path"
        }
        if let problem = commonProblem() { return problem }
        return Self.isPathSegment(deviceToken, limit: Limit.deviceToken)
            ? nil : "the device token is empty, longer than \(Limit.deviceToken) bytes or holds a character that cannot be in a request path (only visible ASCII other than / ? #)"
    }

    /// What every request's headers must satisfy: values without control characters, within ``Limit``.
    private func commonProblem() -> String? {
        if !Self.isHeaderValue(topic, limit: Limit.topic) {
            return "apns-topic holds a control character or is longer than \(Limit.topic) bytes"
        }
        if let collapseID, !Self.isHeaderValue(collapseID, limit: Limit.collapseID) {
            return "apns-collapse-id holds a control character or is longer than \(Limit.collapseID) bytes"
        }
        if !Self.isHeaderValue(apnsID, limit: Limit.apnsID) {
            return "apns-id holds a control character or is longer than \(Limit.apnsID) bytes"
        }
        if !Limit.priority.contains(priority) {
            return "apns-priority \(priority) is longer than \(Limit.priorityDigits) characters"
        }
        return nil
    }

    /// 1 to `limit` visible ASCII characters other than `/`, `?` and `#`.
    private static func isPathSegment(_ value: String, limit: Int) -> Bool {
        let bytes = value.utf8
        guard (1...limit).contains(bytes.count) else { return false }
        for byte in bytes where byte <= 0x20 || byte >= 0x7f || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
            return false
        }
        return true
    }

    private static func isHeaderValue(_ value: String, limit: Int) -> Bool {
        let bytes = value.utf8
        guard bytes.count <= limit else { return false }
        for byte in bytes where byte < 0x20 || byte == 0x7f { return false }
        return true
    }
}
