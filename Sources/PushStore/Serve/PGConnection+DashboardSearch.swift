import Foundation
import PGClient

/// One row of `pushq.notifications` in a list (search results, a reason's rows, a user's page).
public struct NotificationSummary: Sendable, Equatable {
    public var id: Int64
    public var provider: String
    /// NULL for a broadcast row, which has a ``channel`` instead.
    public var deviceToken: String?
    public var channel: String?
    public var lane: String
    public var status: String
    public var lastReason: String?
    public var attempts: Int
    public var createdAt: Date
    public var finishedAt: Date?

    /// The columns, in the order ``decode(_:)`` reads them.
    static let columns = "id, provider, device_token, channel, lane, status, last_reason, attempts, created_at, finished_at"

    static func decode(_ r: PGResult) throws(PGError) -> [NotificationSummary] {
        var out: [NotificationSummary] = []
        for row in r.rows {
            out.append(NotificationSummary(id: try row.decode(Int64?.self, "id") ?? 0, provider: try row.string("provider") ?? "",
                                           deviceToken: try row.string("device_token"), channel: try row.string("channel"),
                                           lane: try row.string("lane") ?? "", status: try row.string("status") ?? "",
                                           lastReason: try row.string("last_reason"), attempts: try row.decode(Int?.self, "attempts") ?? 0,
                                           createdAt: try row.decode(Date?.self, "created_at") ?? Date(timeIntervalSince1970: 0),
                                           finishedAt: try row.decode(Date?.self, "finished_at")))
        }
        return out
    }
}

/// Every column of one notification, in the order of the contract (docs/producers.md), as text.
public struct NotificationRecord: Sendable, Equatable {
    public var columns: [Column]

    public struct Column: Sendable, Equatable {
        public var name: String
        /// The value in PostgreSQL's text form; nil for NULL.
        public var value: String?
    }

    /// The value of the column `name` (nil when NULL or not a column).
    public subscript(name: String) -> String? { columns.first { $0.name == name }?.value }

    /// The columns producers write, then those the worker writes.
    public static let names = [
        "id", "provider", "device_token", "channel", "payload", "push_type", "topic", "priority", "expires_at", "collapse_id",
        "apns_id", "environment", "credential", "scheduled_at", "max_attempts", "metadata", "lane", "dedupe_key", "notify_channel",
        "webpush_keys", "time_zone", "user_ref", "tenant",
        "status", "attempts", "locked_by", "locked_until", "last_status", "last_reason", "apns_unique_id", "fcm_message_name",
        "webpush_location", "sent_at", "finished_at", "created_at",
    ]
}

/// One row of `pushq.devices`, as a user's page shows it.
public struct DeviceRecord: Sendable, Equatable {
    public var deviceToken: String
    public var environment: String
    public var provider: String
    public var kind: String
    public var userRef: String?
    public var topic: String?
    public var registeredAt: Date?
    public var invalidatedAt: Date?
    public var invalidReason: String?
    /// The Live Activity (`activity_id`) or installation (`installation_id`) of a token that is not a device's.
    public var activity: String?

    static let columns = """
        device_token, environment, provider, kind, user_ref, topic, registered_at, invalidated_at, invalid_reason,
        COALESCE(activity_id, installation_id) AS activity
        """

    static func decode(_ r: PGResult) throws(PGError) -> [DeviceRecord] {
        var out: [DeviceRecord] = []
        for row in r.rows {
            out.append(DeviceRecord(deviceToken: try row.string("device_token") ?? "", environment: try row.string("environment") ?? "",
                                    provider: try row.string("provider") ?? "", kind: try row.string("kind") ?? "",
                                    userRef: try row.string("user_ref"), topic: try row.string("topic"),
                                    registeredAt: try row.decode(Date?.self, "registered_at"),
                                    invalidatedAt: try row.decode(Date?.self, "invalidated_at"),
                                    invalidReason: try row.string("invalid_reason"), activity: try row.string("activity")))
        }
        return out
    }
}

extension PGConnection {
    /// How many rows a search, a token's or a user's page lists at most.
    public static let dashboardListLimit = 100
    /// How far back a search by metadata looks, in hours: rows created since.
    public static let metadataSearchHours = 24

    /// Every column of notification `id`, nil when there is no such row.
    public func notificationRecord(id: Int64) throws(PGError) -> NotificationRecord? {
        let r = try query(Self.notificationRecordSQL, [id])
        guard r.count == 1 else { return nil }
        let row = try r.firstRow()
        return NotificationRecord(columns: try NotificationRecord.names.map { name throws(PGError) in .init(name: name, value: try row.string(name)) })
    }

    /// The newest rows sent to `token` (as written, or in lower or upper case: APNs tokens are
    /// hex in any case), and the devices of `pushq.devices` with that token.
    public func rows(forToken token: String) throws(PGError) -> (devices: [DeviceRecord], rows: [NotificationSummary]) {
        let spellings = Array(Set([token, token.lowercased(), token.uppercased()])).sorted()
        let devices = try DeviceRecord.decode(query(Self.devicesByTokenSQL, [token.lowercased(), token, Self.dashboardListLimit]))
        return (devices, try NotificationSummary.decode(readThroughIndexes(Self.rowsByTokenSQL, [spellings, Self.dashboardListLimit])))
    }

    /// A user's devices and the newest rows sent to their tokens.
    public func userPage(userRef: String) throws(PGError) -> (devices: [DeviceRecord], rows: [NotificationSummary]) {
        let devices = try DeviceRecord.decode(query(Self.devicesByUserSQL, [userRef, Self.dashboardListLimit]))
        // APNs tokens are stored lower case in pushq.devices, and in notifications as the producer wrote them.
        let tokens = Array(Set(devices.flatMap { $0.provider == "apns" ? [$0.deviceToken, $0.deviceToken.uppercased()] : [$0.deviceToken] })).sorted()
        guard !tokens.isEmpty else { return (devices, []) }
        return (devices, try NotificationSummary.decode(readThroughIndexes(Self.rowsByTokenSQL, [tokens, Self.dashboardListLimit])))
    }

    /// The newest rows whose `metadata` holds `key` with `value` (as a JSON string, or as the
    /// JSON number or boolean it spells), among those created in the last ``metadataSearchHours``
    /// hours.
    public func rows(metadataKey key: String, value: String) throws(PGError) -> [NotificationSummary] {
        let scalar = Int64(value).map(String.init) ?? (value == "true" || value == "false" ? value : nil)
        return try NotificationSummary.decode(readThroughIndexes(Self.rowsByMetadataSQL,
                                                                 [key, value, scalar, Self.metadataSearchHours, Self.dashboardListLimit]))
    }

    /// Runs `sql`, a read of `pushq.notifications` bounded by a walk of one of its indexes (the
    /// newest rows by `created_at`, a token's rows), in a read-only transaction with sequential
    /// scans off: on a table that holds little more than the walk's window the planner would
    /// rather read it whole, and the cost would then grow with every row kept.
    func readThroughIndexes(_ sql: String, _ parameters: [(any PGParameter)?]) throws(PGError) -> PGResult {
        try typedTransaction(begin: "BEGIN READ ONLY; SET LOCAL enable_seqscan = off") { c throws(PGError) in try c.query(sql, parameters) }
    }

    static let notificationRecordSQL =
        "SELECT " + NotificationRecord.names.map { name in
            // The subscription's auth secret is the worker's alone (``rowJSONWithoutAuthSecret(_:)``).
            name == "webpush_keys" ? "(\(webPushKeysWithoutAuthSecret("")))::text AS webpush_keys" : "\(name)::text"
        }.joined(separator: ", ") + " FROM pushq.notifications WHERE id = $1"

    /// Rows of the tokens `$1`, newest first, `$2` at most: through `notifications_token_created`
    /// (every row, by the token's hash; the token itself checked on the rows it finds).
    static let rowsByTokenSQL = """
        SELECT \(NotificationSummary.columns) FROM pushq.notifications
         WHERE hashtext(device_token) = ANY(ARRAY(SELECT hashtext(t) FROM unnest($1::text[]) t))
           AND device_token = ANY($1::text[])
         ORDER BY created_at DESC, id DESC LIMIT $2
        """

    /// Devices stored with token `$1` (lower-cased, as APNs tokens are stored) or `$2` (FCM's, as given), through the key.
    static let devicesByTokenSQL = """
        SELECT \(DeviceRecord.columns) FROM pushq.devices WHERE device_token IN ($1, $2)
         ORDER BY registered_at DESC NULLS LAST LIMIT $3
        """

    /// A user's devices through `devices_user_ref`, newest registration first.
    static let devicesByUserSQL = """
        SELECT \(DeviceRecord.columns) FROM pushq.devices WHERE user_ref = $1
         ORDER BY registered_at DESC NULLS LAST LIMIT $2
        """

    /// Rows created in the last `$4` hours whose metadata contains `{$1: $2}` (or `{$1: $3}`, $3 a
    /// JSON number or boolean), whatever their status: newest first through
    /// `notifications_created`, `$5` at most.
    static let rowsByMetadataSQL = """
        WITH wanted AS (
            SELECT jsonb_build_object($1::text, $2::text) AS text_value,
                   CASE WHEN $3::text IS NOT NULL THEN jsonb_build_object($1::text, $3::jsonb) END AS scalar_value
        )
        SELECT \(NotificationSummary.columns) FROM pushq.notifications, wanted
         WHERE created_at > now() - $4 * interval '1 hour' AND (metadata @> text_value OR metadata @> scalar_value)
         ORDER BY created_at DESC, id DESC LIMIT $5
        """
}
