import PGClient
/// A device registration as the API received it: the columns of `pushq.devices` it gives, in
/// text form (nil: SQL NULL). A column left out takes the table's default for a new device and
/// is left as it is for a registered one.
public struct DeviceRegistration: Sendable, Equatable {
    public var values: [String: String?]

    public init(values: [String: String?]) { self.values = values }

    /// The columns a registration may give (docs/producers.md, "The device registry").
    public static let writableColumns = [
        "device_token", "provider", "environment", "user_ref", "topic", "kind", "activity_id", "installation_id", "time_zone",
        "webpush_keys",
    ]
    /// The registry's key: on conflict with these, the registration refreshes the row.
    static let keyColumns: Set<String> = ["device_token", "provider", "environment"]
}

extension PGConnection {
    /// Most devices ``devices(userRef:limit:)`` returns.
    public static let userDevicesLimit = 1_000

    /// A row `alias` of `pushq.devices` or `pushq.notifications` as the API answers it: every
    /// column, in the table's order, but `webpush_keys` with its `p256dh` alone (null for other
    /// providers). The `auth` secret is the subscription's, shared with the app server alone (RFC
    /// 8291 §2): stored for the worker, it never leaves through the API or the dashboard.
    static func rowJSONWithoutAuthSecret(_ alias: String) -> String {
        "row_to_json(jsonb_populate_record(\(alias), jsonb_build_object('webpush_keys', \(webPushKeysWithoutAuthSecret(alias + ".")))))"
    }

    /// `webpush_keys` (of the row `prefix` names, e.g. `"d."`, or unqualified with `""`) with its
    /// `p256dh` alone; NULL stays NULL.
    static func webPushKeysWithoutAuthSecret(_ prefix: String) -> String {
        "CASE WHEN \(prefix)webpush_keys IS NOT NULL THEN jsonb_build_object('p256dh', \(prefix)webpush_keys -> 'p256dh') END"
    }

    /// Registers a device, or refreshes its registration (`registered_at = now()`, which makes a
    /// token the provider invalidated valid again, and the given columns), in one upsert on
    /// `devices_pkey`.
    ///
    /// - Returns: whether the row is new, and the row as a JSON object (``rowJSONWithoutAuthSecret(_:)``).
    /// - Throws: `PGError` naming the constraint the table refuses the registration with.
    public func registerDevice(_ device: DeviceRegistration) throws(PGError) -> (created: Bool, json: String) {
        let columns = DeviceRegistration.writableColumns.filter { device.values.keys.contains($0) }
        let parameters: [(any PGParameter)?] = columns.map { device.values[$0] ?? nil }
        let updates = columns.filter { !DeviceRegistration.keyColumns.contains($0) }.map { "\($0) = EXCLUDED.\($0)" } + ["registered_at = now()"]
        let r = try query("""
            INSERT INTO pushq.devices AS d (\(columns.joined(separator: ", ")))
            VALUES (\((1...max(1, columns.count)).map { "$\($0)" }.joined(separator: ", ")))
            ON CONFLICT ON CONSTRAINT devices_pkey DO UPDATE SET \(updates.joined(separator: ", "))
            RETURNING d.xmax = 0 AS created, \(Self.rowJSONWithoutAuthSecret("d"))::text AS row
            """, parameters)
        let row = try r.firstRow()
        return (try row.decode(Bool.self, "created"), try row.decode(String.self, "row"))
    }

    /// Deletes the registrations of `token` (an APNs token in any case), of `provider` and in
    /// `environment` when given, else of any; records `audit` with the rows deleted, if any, in
    /// the same transaction. Through `devices_pkey`.
    ///
    /// - Returns: how many registrations were deleted.
    public func unregisterDevice(token: String, provider: String?, environment: String?, audit: AuditEntry) throws -> Int {
        try transaction { c in
            try c.query("SELECT set_config('lock_timeout', $1, true)", [Self.serveLockTimeout])
            let deleted = try c.query(Self.unregisterSQL, [token, provider, environment]).affectedRows
            if deleted > 0 {
                var entry = audit
                entry.rows = deleted
                try c.recordAudit(entry)
            }
            return deleted
        }
    }

    /// A token's registrations (an APNs token in any case), through `devices_pkey`.
    static let unregisterSQL = """
        DELETE FROM pushq.devices
         WHERE device_token = ANY(ARRAY[$1, lower($1)])
           AND (device_token = $1 OR provider = 'apns')
           AND ($2::text IS NULL OR provider = $2) AND ($3::text IS NULL OR environment = $3)
        """

    /// The newest `limit` registrations of `userRef` (through `devices_user_ref`), as a JSON
    /// array of row objects (``rowJSONWithoutAuthSecret(_:)``), newest registration first.
    public func devices(userRef: String, limit: Int) throws(PGError) -> String {
        let r = try query(Self.userDevicesSQL, [userRef, limit])
        return try r.rows.first?.string("devices") ?? "[]"
    }

    static let userDevicesSQL = """
        SELECT COALESCE(json_agg(\(rowJSONWithoutAuthSecret("d")) ORDER BY d.registered_at DESC NULLS LAST, d.device_token), '[]')::text AS devices FROM (
            SELECT * FROM pushq.devices WHERE user_ref = $1 ORDER BY registered_at DESC NULLS LAST, device_token LIMIT $2
        ) d
        """

    /// `pushq.enqueue_for_user(user_ref, ...)` with the named arguments given (text forms; an
    /// argument left out takes the function's default).
    ///
    /// - Parameter arguments: argument name → value; names from ``enqueueForUserArguments``.
    /// - Returns: the ids of the rows made.
    public func enqueueForUser(_ userRef: String, arguments: [String: String?]) throws(PGError) -> [Int64] {
        let names = Self.enqueueForUserArguments.filter { arguments.keys.contains($0) }
        let parameters: [(any PGParameter)?] = [userRef] + names.map { arguments[$0] ?? nil }
        let named = names.enumerated().map { ", \($0.element) => $\($0.offset + 2)::\(Self.enqueueForUserTypes[$0.element] ?? "text")" }
        let r = try query("SELECT id FROM pushq.enqueue_for_user(user_ref => $1\(named.joined())) id", parameters)
        var ids: [Int64] = []
        for row in r.rows { ids.append(try row.decode(Int64?.self, "id") ?? 0) }
        return ids
    }

    /// The optional arguments of `pushq.enqueue_for_user`, in its order.
    public static let enqueueForUserArguments = [
        "payload", "topic", "push_type", "priority", "expires_at", "collapse_id", "credential", "scheduled_at",
        "max_attempts", "metadata", "fcm_payload", "lane", "dedupe_key", "notify_channel", "local_time", "webpush_payload", "tenant",
    ]
    /// Their types (named notation needs the parameter's type to pick the function).
    static let enqueueForUserTypes = [
        "payload": "json", "priority": "integer", "expires_at": "timestamptz", "scheduled_at": "timestamptz",
        "max_attempts": "integer", "metadata": "jsonb", "fcm_payload": "json", "local_time": "timestamp", "webpush_payload": "json",
    ]
}
