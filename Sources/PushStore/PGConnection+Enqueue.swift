import Foundation

/// One notification to insert: the columns it gives, each value in PostgreSQL's text form (nil
/// is SQL NULL). A column it leaves out takes the table's default, as in a producer's INSERT
/// that does not name it: the defaults live in the schema only.
public struct NotificationInsert: Sendable, Equatable {
    public var values: [String: String?]

    public init(values: [String: String?]) { self.values = values }

    /// The columns producers write (docs/producers.md), in the order statements name them: the
    /// only names ``values`` may use.
    public static let writableColumns = [
        "provider", "device_token", "channel", "payload", "push_type", "topic", "priority", "expires_at", "collapse_id",
        "apns_id", "environment", "credential", "scheduled_at", "max_attempts", "metadata", "lane", "dedupe_key", "notify_channel",
    ]
}

/// What became of one notification of an enqueue: its row, and whether this request made it
/// (false: a row with its `dedupe_key` existed, and `id` is that row's).
public struct EnqueueOutcome: Sendable, Equatable {
    public var id: Int64
    public var created: Bool

    public init(id: Int64, created: Bool) {
        self.id = id
        self.created = created
    }
}

/// An enqueue the table refused: the database's error, and the first row that breaks it.
public struct EnqueueRefusal: Error, Sendable {
    public var error: PGError
    /// The index, in the request, of the first row whose insert fails on its own or after the
    /// rows before it (a `dedupe_key` repeated within the batch counts as the second one).
    public var index: Int
}

extension PGConnection {
    /// Most rows one ``enqueue(_:)`` takes (65 535 bound parameters at most per statement).
    public static let enqueueLimit = 1_000

    /// Inserts `rows` in one statement (`ON CONFLICT (dedupe_key) DO NOTHING`), all or none.
    ///
    /// Ids are taken from the table's sequence first, so that each row's id is known whatever
    /// order the rows come back in; a row whose `dedupe_key` exists gets that row's id. The
    /// insert trigger wakes workers once for the whole batch.
    ///
    /// - Returns: one outcome per row, in order.
    /// - Throws: ``EnqueueRefusal`` when the table refuses a row (a named constraint, a NULL in a
    ///   NOT NULL column), found by inserting shorter prefixes in transactions rolled back;
    ///   `PGError` for anything else.
    public func enqueue(_ rows: [NotificationInsert]) throws -> [EnqueueOutcome] {
        precondition(!rows.isEmpty && rows.count <= Self.enqueueLimit, "1 to \(Self.enqueueLimit) rows")
        let ids = try query("SELECT nextval(pg_get_serial_sequence('pushq.notifications', 'id')) FROM generate_series(1, $1)", [rows.count])
        var id: [Int64] = []
        for i in 0..<ids.count { id.append(try ids.decode(Int64.self, i, "nextval")) }
        let inserted: PGResult
        do {
            let (sql, parameters) = Self.insertStatement(rows, ids: id)
            inserted = try query(sql, parameters)
        } catch {
            guard Self.isDataError(error) else { throw error }
            throw EnqueueRefusal(error: error, index: rows.count == 1 ? 0 : try firstRefusedRow(rows, ids: id))
        }
        var created = Set<Int64>()
        for i in 0..<inserted.count { created.insert(try inserted.decode(Int64.self, i, "id")) }
        var outcomes = zip(id, rows).map { EnqueueOutcome(id: $0.0, created: created.contains($0.0)) }
        let repeated = zip(outcomes, rows).compactMap { $0.0.created ? nil : $0.1.values["dedupe_key"] ?? nil }
        guard !repeated.isEmpty else { return outcomes }
        // Rows whose key existed: that row's id (a new statement sees rows committed meanwhile).
        let existing = try query(Self.dedupeLookupSQL, [repeated])
        var byKey: [String: Int64] = [:]
        for i in 0..<existing.count { byKey[try existing.decode(String.self, i, "dedupe_key")] = try existing.decode(Int64.self, i, "id") }
        for i in outcomes.indices where !outcomes[i].created {
            // A row deleted between the insert and this read (retention) leaves its key free: 0.
            outcomes[i].id = (rows[i].values["dedupe_key"] ?? nil).flatMap { byKey[$0] } ?? 0
        }
        return outcomes
    }

    /// The rows that hold these keys, through `notifications_dedupe_key`.
    static let dedupeLookupSQL = "SELECT dedupe_key, id FROM pushq.notifications WHERE dedupe_key = ANY($1::text[])"

    /// `INSERT ... VALUES` of `rows` with their `ids`; a column a row leaves out is `DEFAULT`.
    static func insertStatement(_ rows: [NotificationInsert], ids: [Int64]) -> (String, [(any PGParameter)?]) {
        let given = Set(rows.flatMap(\.values.keys))
        let columns = NotificationInsert.writableColumns.filter(given.contains)
        var parameters: [(any PGParameter)?] = []
        parameters.reserveCapacity(rows.count * (columns.count + 1))
        var sql = "INSERT INTO pushq.notifications (id" + columns.map { ", " + $0 }.joined() + ") VALUES "
        for (r, row) in rows.enumerated() {
            sql += r == 0 ? "(" : ", ("
            parameters.append(ids[r])
            sql += "$\(parameters.count)"
            for column in columns {
                if let value = row.values[column] {
                    parameters.append(value)
                    sql += ", $\(parameters.count)"
                } else {
                    sql += ", DEFAULT"
                }
            }
            sql += ")"
        }
        sql += " ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING RETURNING id"
        return (sql, parameters)
    }

    /// Whether the server refused the statement for its data (class 22, data exception, or 23,
    /// integrity constraint violation), not for something else (a lost connection, a timeout).
    static func isDataError(_ error: PGError) -> Bool {
        guard error.code == .server, let state = error.sqlState else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23")
    }

    /// The index of the first row whose prefix fails to insert, by halving: about log2(n)
    /// inserts, each in a transaction rolled back. The whole batch failed already.
    private func firstRefusedRow(_ rows: [NotificationInsert], ids: [Int64]) throws -> Int {
        var (low, high) = (1, rows.count)  // the shortest failing prefix has low...high rows
        while low < high {
            let mid = (low + high) / 2
            if try prefixFails(Array(rows[..<mid]), ids: Array(ids[..<mid])) { high = mid } else { low = mid + 1 }
        }
        return high - 1
    }

    private func prefixFails(_ rows: [NotificationInsert], ids: [Int64]) throws -> Bool {
        try execute("BEGIN")
        defer { try? execute("ROLLBACK") }
        do {
            let (sql, parameters) = Self.insertStatement(rows, ids: ids)
            try query(sql, parameters)
            return false
        } catch {
            guard Self.isDataError(error) else { throw error }
            return true
        }
    }
}
