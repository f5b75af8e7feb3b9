/// One request to APNs' channel-management API (`api-manage-broadcast[.sandbox].push.apple.com`,
/// ports 2196 / 2195): what goes on the wire, decided here and table-tested.
///
/// Every request goes to `/1/apps/<bundle id>/…`; a read or a delete names its channel in the
/// `apns-channel-id` header, a create sends its configuration as a JSON body, and APNs answers a
/// create with `201` and the new id in `apns-channel-id`, a delete with `204`, a read and a list
/// with `200` and a JSON body ("Sending channel management requests to APNs").
public enum ChannelOperation: Sendable, Hashable {
    /// `POST /1/apps/<bundle>/channels` with `{"message-storage-policy":N,"push-type":"LiveActivity"}`.
    case create(ChannelStoragePolicy)
    /// `GET /1/apps/<bundle>/channels` with `apns-channel-id`.
    case read(channelID: String)
    /// `DELETE /1/apps/<bundle>/channels` with `apns-channel-id`.
    case delete(channelID: String)
    /// `GET /1/apps/<bundle>/all-channels`: the ids of every channel of the app in the environment.
    case listAll

    /// The operation's name for logs and metric labels: `create`, `read`, `delete` or `list`.
    public var name: String {
        switch self {
        case .create: return "create"
        case .read: return "read"
        case .delete: return "delete"
        case .listAll: return "list"
        }
    }

    /// The HTTP method.
    public var method: String {
        switch self {
        case .create: return "POST"
        case .read, .listAll: return "GET"
        case .delete: return "DELETE"
        }
    }

    /// The path for `bundleID`, e.g. `/1/apps/com.example.app/channels`.
    public func path(bundleID: String) -> String {
        switch self {
        case .create, .read, .delete: return "/1/apps/\(bundleID)/channels"
        case .listAll: return "/1/apps/\(bundleID)/all-channels"
        }
    }

    /// The `apns-channel-id` header's value, nil when the operation sends none.
    public var channelID: String? {
        switch self {
        case .read(let id), .delete(let id): return id
        case .create, .listAll: return nil
        }
    }

    /// Why this operation cannot be sent as it is, nil when it can: the channel id of a read or a
    /// delete goes into the `apns-channel-id` header, so it must be 1 to
    /// ``APNsHeaders/Limit/channelID`` bytes with no control character (CR, LF, NUL…), as a
    /// broadcast's is (``APNsHeaders/problem(deviceToken:)``).
    public var problem: String? {
        guard let id = channelID else { return nil }
        guard !id.isEmpty, id.utf8.count <= APNsHeaders.Limit.channelID, id.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7f }) else {
            return "apns-channel-id is empty, holds a control character or is longer than \(APNsHeaders.Limit.channelID) bytes"
        }
        return nil
    }

    /// The JSON body, empty when the operation sends none.
    public var body: [UInt8] {
        guard case .create(let policy) = self else { return [] }
        return Array("{\"message-storage-policy\":\(policy.rawValue),\"push-type\":\"LiveActivity\"}".utf8)
    }

    /// The status of a successful answer: 201 (create), 204 (delete) or 200 (read, list).
    public var successStatus: Int {
        switch self {
        case .create: return 201
        case .delete: return 204
        case .read, .listAll: return 200
        }
    }
}
