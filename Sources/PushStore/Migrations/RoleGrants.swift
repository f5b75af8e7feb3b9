import PGClient
/// The database role a long-running pushq command runs as, apart from the schema's owner.
///
/// `pushq migrate` (and `pushq api-key`, which writes keys) run as the owner of schema `pushq`;
/// `pushq serve`, exposed to producers and browsers, and `pushq worker` each run as a role of
/// their own that can read and write rows but never change, empty or drop a table
/// (docs/deploy.md, Database roles).
public enum DatabaseRole: String, CaseIterable, Sendable {
    /// `pushq serve`: the API and the dashboard.
    case serve
    /// `pushq worker`: claims, sends, writes back, prunes.
    case worker
}

/// What each ``DatabaseRole`` may do with each object of schema `pushq`: the one source of the
/// grants `pushq migrate --print-grants` prints and `pushq migrate --grant-serve/--grant-worker`
/// applies.
///
/// Worked out from every statement each command runs (`Sources/PushStore/PGConnection+*.swift`,
/// `ClaimStatement.swift`) and from the triggers those statements fire, which run with the rights
/// of the role whose statement fired them (none is `SECURITY DEFINER`): an INSERT into
/// `pushq.notifications` also writes `pushq.due` (`due_inserted`) and locks its channel's row
/// `FOR SHARE` (`notifications_channel`, which PostgreSQL allows only with an UPDATE privilege on
/// the table: serve gets it on `updated_at` alone); a row that ends deletes its `pushq.due` entry
/// (`due_ended`) and may retire an activity token in `pushq.devices`; a lane's row makes its
/// bucket in `pushq.rate_budgets` (`lanes_budget`). LISTEN, NOTIFY and advisory locks need no
/// privilege; trigger functions need no EXECUTE to fire.
///
/// Every table, sequence and function of the schema is listed, those a role needs nothing of
/// with an empty list: `RoleGrantsTests` fails when a migration adds an object this catalog does
/// not classify.
public enum RoleGrants {
    /// One object of schema `pushq` and the privileges each role has on it.
    public struct Entry: Sendable {
        public enum Kind: String, Sendable { case table = "TABLE", sequence = "SEQUENCE", function = "FUNCTION" }
        public var kind: Kind
        /// The name in schema `pushq`; a function's with its argument types, as `GRANT` takes it.
        public var name: String
        /// Privileges (`SELECT`, `UPDATE (updated_at)`, `EXECUTE`…) by role; none when absent.
        public var privileges: [DatabaseRole: [String]]
    }

    static let all = ["SELECT", "INSERT", "UPDATE", "DELETE"]

    static func table(_ name: String, serve: [String], worker: [String]) -> Entry {
        Entry(kind: .table, name: name, privileges: [.serve: serve, .worker: worker])
    }

    static func sequence(_ name: String, serve: Bool, worker: Bool) -> Entry {
        Entry(kind: .sequence, name: name, privileges: [.serve: serve ? ["USAGE", "SELECT"] : [], .worker: worker ? ["USAGE", "SELECT"] : []])
    }

    static func function(_ name: String, serve: Bool, worker: Bool) -> Entry {
        Entry(kind: .function, name: name, privileges: [.serve: serve ? ["EXECUTE"] : [], .worker: worker ? ["EXECUTE"] : []])
    }

    /// Every object of schema `pushq` as of the migrations this binary carries.
    public static let catalog: [Entry] = [
        // serve: keys are looked up and their last use stamped; created and revoked only by
        // `pushq api-key` (the owner).
        table("api_keys", serve: ["SELECT", "UPDATE (last_used_at)"], worker: []),
        table("api_sessions", serve: ["SELECT", "INSERT", "DELETE"], worker: []),
        table("audit_log", serve: ["INSERT"], worker: []),
        // serve: enqueue (INSERT, and the triggers' pushq.due), cancel (UPDATE); the worker:
        // claim, write-back, expiry (UPDATE), prune (DELETE). Neither may TRUNCATE.
        table("notifications", serve: ["SELECT", "INSERT", "UPDATE"], worker: ["SELECT", "UPDATE", "DELETE"]),
        table("due", serve: all, worker: all),
        table("leases", serve: ["SELECT"], worker: all),
        // serve: the dashboard's pause and resume (an upsert, whose trigger makes the bucket; a
        // resume deletes the row a pause made).
        table("lanes", serve: all, worker: ["SELECT"]),
        table("rate_budgets", serve: ["INSERT"], worker: ["SELECT", "INSERT", "UPDATE"]),
        // serve: the dashboard lifts a hold.
        table("credential_pauses", serve: ["SELECT", "DELETE"], worker: all),
        table("token_throttles", serve: [], worker: all),
        // serve: registration and removal through the API; the worker: invalidations, retired
        // activity tokens.
        table("devices", serve: all, worker: ["SELECT", "INSERT", "UPDATE"]),
        table("outcomes", serve: ["SELECT"], worker: all),
        table("workers", serve: ["SELECT"], worker: all),
        // serve: a broadcast row's INSERT locks its channel FOR SHARE (see above).
        table("channels", serve: ["SELECT", "UPDATE (updated_at)"], worker: ["SELECT", "UPDATE"]),
        table("channel_reconciliations", serve: ["SELECT"], worker: ["SELECT", "INSERT", "UPDATE"]),
        table("schema_migrations", serve: ["SELECT"], worker: ["SELECT"]),
        // Every role reads it (GRANT … TO PUBLIC in migration 106): an INSERT with a time_zone reads it.
        table("time_zones", serve: ["SELECT"], worker: ["SELECT"]),
        // Frequency caps (112): the claim reserves, the write-back, the give-back and the upkeep delete.
        table("recipient_sends", serve: [], worker: ["SELECT", "INSERT", "DELETE"]),

        sequence("notifications_id_seq", serve: true, worker: false),
        sequence("audit_log_id_seq", serve: true, worker: false),
        sequence("leases_id_seq", serve: false, worker: true),
        sequence("api_keys_id_seq", serve: false, worker: false),
        sequence("channels_id_seq", serve: false, worker: false),

        function("enqueue_for_user(text, json, text, text, integer, timestamp with time zone, text, text, timestamp with time zone, integer, jsonb, json, text, text, text, json, timestamp without time zone, text)", serve: true, worker: false),
        function("token_is_invalid(timestamp with time zone, timestamp with time zone)", serve: true, worker: true),
        function("topic_suffix(text)", serve: true, worker: false),
        function("channel_active(text)", serve: false, worker: true),
        // Quiet hours (107): the claim reads each lane's rules and computes windows; `pushq status`
        // and the dashboard read the rules.
        function("lane_rules(text)", serve: true, worker: true),
        function("quiet_window(timestamp with time zone, text, time without time zone, time without time zone)", serve: false, worker: true),
        function("quiet_until(timestamp with time zone, text, time without time zone, time without time zone)", serve: false, worker: false),
        // Frequency caps (112): the claim reads each lane's cap and keys recipients; `pushq status` and
        // the dashboard read the caps.
        function("lane_caps(text)", serve: true, worker: true),
        function("recipient_key(text, text, text)", serve: false, worker: true),
        // `pushq migrate` (the owner) refreshes the zones.
        function("refresh_time_zones()", serve: false, worker: false),
        function("carry_execute_grants(aclitem[], regprocedure)", serve: false, worker: false),
        // Producers' functions (docs/producers.md): neither role calls them.
        function("activity_payload(text, json, timestamp with time zone, timestamp with time zone, timestamp with time zone, json, double precision, text, json, boolean, text)", serve: false, worker: false),
        function("activity_rows(text, json, integer, timestamp with time zone, text, text, text, jsonb)", serve: false, worker: false),
        function("broadcast(text, json, integer, timestamp with time zone, timestamp with time zone, integer, jsonb, text, text, text)", serve: false, worker: false),
        function("delete_channel(text)", serve: false, worker: false),
        function("start_activity(text, text, json, json, json, boolean, text, timestamp with time zone, double precision, timestamp with time zone, integer, timestamp with time zone, text, text, text, jsonb)", serve: false, worker: false),
        function("update_activity(text, json, timestamp with time zone, json, double precision, timestamp with time zone, integer, timestamp with time zone, text, text, text, jsonb)", serve: false, worker: false),
        function("end_activity(text, json, timestamp with time zone, json, timestamp with time zone, integer, timestamp with time zone, text, text, text, jsonb)", serve: false, worker: false),
    ]

    /// Trigger functions: they fire with the privileges of the statement's role and need no grant.
    /// Listed so that `RoleGrantsTests` knows every function of the schema is classified.
    public static let triggerFunctions: Set<String> = [
        "channels_changed", "channels_status", "devices_activity_tokens", "devices_lowercase_token", "devices_rules",
        "due_ended", "due_inserted", "due_waiting", "lanes_budget", "notifications_channel",
        "notifications_rules", "notify_enqueued", "notify_final", "notify_lanes_changed", "retire_ended_activity_token",
        "time_zone_known", "tenant_shape", "due_tenant",
    ]

    /// The idempotent `GRANT` statements that let `role` run as `use`, one a line, after a
    /// comment that says what they are for.
    ///
    /// - Parameters:
    ///   - use: what the role runs, `pushq serve` or `pushq worker`.
    ///   - role: the PostgreSQL role's name, quoted as an identifier.
    public static func sql(for use: DatabaseRole, role: String) -> String {
        let grantee = quoted(role)
        var lines = [
            "-- The privileges `pushq \(use.rawValue)` needs on schema pushq, for role \(grantee).",
            "-- Run as the schema's owner, after `pushq migrate`, and again after every upgrade: a new",
            "-- migration may add a table (GRANT is idempotent). The role needs CONNECT on the database",
            "-- (PUBLIC has it unless revoked) and must not own the schema or its tables.",
            "GRANT USAGE ON SCHEMA pushq TO \(grantee);",
        ]
        for entry in catalog {
            let privileges = entry.privileges[use] ?? []
            guard !privileges.isEmpty else { continue }
            lines.append("GRANT \(privileges.joined(separator: ", ")) ON \(entry.kind.rawValue) pushq.\(entry.name) TO \(grantee);")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Why `name` cannot be a PostgreSQL role's name (empty, longer than 63 bytes, a control
    /// character), nil when it can.
    public static func roleNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "the role's name is empty" }
        if name.utf8.count > 63 { return "the role's name \(name.prefix(20))… is longer than PostgreSQL's 63 bytes" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return "the role's name contains a control character" }
        return nil
    }

    /// `name` as an SQL identifier in double quotes, `"` doubled.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension PGConnection {
    /// Grants `role` what `pushq \(use)` needs (``RoleGrants/sql(for:role:)``), in one transaction.
    ///
    /// - Throws: `PGError`, e.g. SQLSTATE 42704 when the role does not exist, 42501 when this
    ///   connection's role does not own schema pushq.
    public func grant(_ use: DatabaseRole, to role: String) throws {
        let sql = RoleGrants.sql(for: use, role: role)
        try transaction { c in try c.execute(sql) }
    }
}
