extension APNsRequest {
    /// The longest value the sender puts in each header, in bytes. The header slots of a
    /// stream are sized from these, so a request within them always fits.
    public enum HeaderLimit {
        /// `apns-topic`: a bundle id (`pushq.notifications` allows 255 bytes) plus the push
        /// type's suffix (at most 23 bytes).
        public static let topic = 320
        /// `apns-collapse-id`: APNs' own limit.
        public static let collapseID = 64
        /// `apns-id` (a canonical UUID is 36).
        public static let apnsID = 64
        /// The device token, sent in the `:path`.
        public static let deviceToken = 200
        /// `apns-priority` in decimal, sign included.
        public static let priorityDigits = 10
        /// The priorities whose decimal form fits ``priorityDigits``.
        public static let priority: ClosedRange<Int> = -999_999_999...9_999_999_999
    }

    /// Why this request cannot be sent as it is, or nil if it can.
    ///
    /// A header value (topic, collapse id, apns-id) must hold no control character (CR, LF,
    /// NUL or any other byte below 0x20, or 0x7F) and stay within ``HeaderLimit``; the device
    /// token must be 1 to ``HeaderLimit/deviceToken`` visible ASCII characters other than
    /// `/`, `?` and `#` (it becomes the request path). The check reads the bytes in place and
    /// allocates nothing unless it finds a problem.
    public var headerProblem: String? {
        if !Self.isHeaderValue(topic, limit: HeaderLimit.topic) {
            return "apns-topic holds a control character or is longer than \(HeaderLimit.topic) bytes"
        }
        if let collapseID, !Self.isHeaderValue(collapseID, limit: HeaderLimit.collapseID) {
            return "apns-collapse-id holds a control character or is longer than \(HeaderLimit.collapseID) bytes"
        }
        if !Self.isHeaderValue(apnsID, limit: HeaderLimit.apnsID) {
            return "apns-id holds a control character or is longer than \(HeaderLimit.apnsID) bytes"
        }
        if !HeaderLimit.priority.contains(priority) {
            return "apns-priority \(priority) is longer than \(HeaderLimit.priorityDigits) characters"
        }
        let token = deviceToken.utf8
        guard (1...HeaderLimit.deviceToken).contains(token.count) else {
            return "the device token is empty or longer than \(HeaderLimit.deviceToken) bytes"
        }
        for byte in token where byte <= 0x20 || byte >= 0x7f || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
            return "the device token holds a character that cannot be in a request path (only visible ASCII other than / ? #)"
        }
        return nil
    }

    private static func isHeaderValue(_ value: String, limit: Int) -> Bool {
        let bytes = value.utf8
        guard bytes.count <= limit else { return false }
        for byte in bytes where byte < 0x20 || byte == 0x7f { return false }
        return true
    }
}
