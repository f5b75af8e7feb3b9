import NIOHPACK

/// The headers of one request that the mock looks at, read in one pass.
struct RequestHead {
    var method: String?
    var path: String?
    var authorization: String?
    var pushType: String?
    var topic: String?
    var priority: String?
    var expiration: String?
    var collapseID: String?
    var apnsID: String?
    /// `apns-channel-id` (broadcasts, channel reads and deletes) and `apns-request-id`.
    var channelID: String?
    var requestID: String?
    /// A header APNs reads appeared more than once (→ `DuplicateHeaders`).
    var hasDuplicates = false

    init(_ headers: HPACKHeaders) {
        for (name, value, _) in headers {
            switch name {
            case ":method": Self.set(&method, value, &hasDuplicates)
            case ":path": Self.set(&path, value, &hasDuplicates)
            case "authorization": Self.set(&authorization, value, &hasDuplicates)
            case "apns-push-type": Self.set(&pushType, value, &hasDuplicates)
            case "apns-topic": Self.set(&topic, value, &hasDuplicates)
            case "apns-priority": Self.set(&priority, value, &hasDuplicates)
            case "apns-expiration": Self.set(&expiration, value, &hasDuplicates)
            case "apns-collapse-id": Self.set(&collapseID, value, &hasDuplicates)
            case "apns-id": Self.set(&apnsID, value, &hasDuplicates)
            case "apns-channel-id": Self.set(&channelID, value, &hasDuplicates)
            case "apns-request-id": Self.set(&requestID, value, &hasDuplicates)
            default: break
            }
        }
    }

    private static func set(_ field: inout String?, _ value: String, _ duplicate: inout Bool) {
        if field != nil { duplicate = true }
        field = value
    }

    /// The path without a query string.
    var pathOnly: Substring {
        guard let path else { return "" }
        if let q = path.utf8.firstIndex(of: UInt8(ascii: "?")) { return path[..<q] }
        return path[...]
    }

    /// Whether the path is a control request (`/_mock/...`).
    var isControl: Bool {
        path?.utf8.starts(with: "/_mock/".utf8) ?? false
    }
}
