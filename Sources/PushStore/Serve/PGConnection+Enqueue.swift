import Foundation
import PGClient

/// One notification to insert: the columns it gives, each value in PostgreSQL's text form (nil
/// is SQL NULL). A column it leaves out takes the table's default, as in a producer's INSERT
/// that does not name it: the defaults live in the schema only.
public struct NotificationInsert: Sendable, Equatable {
    public var values: [String: String?]

    public init(values: [String: String?]) { self.values = values }

    /// The columns producers write (docs/producers.md) and their types in the table, in the order
    /// statements name them: the only names ``values`` may use. (A test compares the types with
    /// the catalog's.)
    public static let writableColumns: [(name: String, type: String)] = [
        ("provider", "text"), ("device_token", "text"), ("channel", "text"), ("payload", "json"), ("push_type", "text"),
        ("topic", "text"), ("priority", "smallint"), ("expires_at", "timestamptz"), ("collapse_id", "text"), ("apns_id", "uuid"),
        ("environment", "text"), ("credential", "text"), ("scheduled_at", "timestamptz"), ("max_attempts", "smallint"),
        ("metadata", "jsonb"), ("lane", "text"), ("dedupe_key", "text"), ("notify_channel", "text"), ("time_zone", "text"),
        ("user_ref", "text"), ("webpush_keys", "jsonb"), ("tenant", "text"),
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

    /// Inserts `rows`, all or none: one statement per set of columns the rows give (one for a
    /// batch of like rows), `ON CONFLICT (dedupe_key) DO NOTHING`.
    ///
    /// Each statement takes its ids from the table's sequence for every row it is given, so that
    /// each row's id is known whatever order rows come back in; a row whose `dedupe_key` exists
    /// gets that row's id. The insert trigger wakes workers once per statement.
    ///
    /// A row whose key was taken at the insert but whose holder is gone at the look-up (deleted
    /// by retention in between: the key is free again) is inserted once more, so that every
    /// outcome names a row that exists; the rare row whose holder vanished both times is an error.
    ///
    /// - Returns: one outcome per row, in order.
    /// - Throws: ``EnqueueRefusal`` when the table refuses a row (a named constraint, a NULL in a
    ///   NOT NULL column), found by inserting shorter prefixes in transactions rolled back;
    ///   `PGError` for anything else (SQLSTATE 40001, "try again", when a holder vanished twice).
    public func enqueue(_ rows: [NotificationInsert]) throws -> [EnqueueOutcome] {
        var outcomes = try insertAndLookUp(rows)
        let lost = outcomes.indices.filter { outcomes[$0].id == 0 }
        guard !lost.isEmpty else { return outcomes }
        let again: [EnqueueOutcome]
        do {
            again = try insertAndLookUp(lost.map { rows[$0] })
        } catch var refusal as EnqueueRefusal {
            refusal.index = lost[refusal.index]
            throw refusal
        }
        for (k, i) in lost.enumerated() { outcomes[i] = again[k] }
        guard !outcomes.contains(where: { $0.id == 0 }) else {
            throw PGError(code: .server, message: "a dedupe_key's row was deleted (retention) while this request inserted it, twice: try again",
                          sqlState: "40001")
        }
        return outcomes
    }

    /// One pass of ``enqueue(_:)``: the inserts, then the look-up of the rows whose key existed;
    /// a row whose key's holder is gone by then has id 0.
    private func insertAndLookUp(_ rows: [NotificationInsert]) throws -> [EnqueueOutcome] {
        precondition(!rows.isEmpty && rows.count <= Self.enqueueLimit, "1 to \(Self.enqueueLimit) rows")
        let groups = Self.groupedByColumns(rows)
        var outcomes = [EnqueueOutcome](repeating: EnqueueOutcome(id: 0, created: false), count: rows.count)
        do {
            try inOneTransaction(groups.count > 1) {
                for group in groups {
                    let r = try query(Self.insertStatement(group.map { rows[$0] }), Self.arrays(group.map { rows[$0] }))
                    let inserted = r.rows
                    for (k, index) in group.enumerated() {
                        outcomes[index] = EnqueueOutcome(id: try inserted[k].decode(Int64.self, "id"), created: try inserted[k].decode(Bool.self, "created"))
                    }
                }
            }
        } catch let error as PGError {
            guard Self.isDataError(error) else { throw error }
            throw EnqueueRefusal(error: error, index: try firstRefusedRow(rows, groups))
        }
        let repeated = zip(outcomes, rows).compactMap { $0.0.created ? nil : $0.1.values["dedupe_key"] ?? nil }
        guard !repeated.isEmpty else { return outcomes }
        // Rows whose key existed: that row's id (a new statement sees rows committed meanwhile).
        let existing = try query(Self.dedupeLookupSQL, [repeated])
        var byKey: [String: Int64] = [:]
        for row in existing.rows { byKey[try row.decode(String.self, "dedupe_key")] = try row.decode(Int64.self, "id") }
        for i in outcomes.indices where !outcomes[i].created {
            // A row deleted between the insert and this read (retention) leaves its key free: 0,
            // for enqueue(_:) to insert again.
            outcomes[i].id = (rows[i].values["dedupe_key"] ?? nil).flatMap { byKey[$0] } ?? 0
        }
        return outcomes
    }

    /// The rows that hold these keys, through `notifications_dedupe_key`.
    static let dedupeLookupSQL = "SELECT dedupe_key, id FROM pushq.notifications WHERE dedupe_key = ANY($1::text[])"

    /// The indexes of `rows` grouped by the set of columns they give, groups in order of first row.
    static func groupedByColumns(_ rows: [NotificationInsert]) -> [[Int]] {
        var groups: [[Int]] = []
        var byColumns: [Set<String>: Int] = [:]
        for (i, row) in rows.enumerated() {
            let columns = Set(row.values.keys)
            if let g = byColumns[columns] { groups[g].append(i) } else { byColumns[columns] = groups.count; groups.append([i]) }
        }
        return groups
    }

    /// The columns `rows` give (all give the same), in the table's order, with their types.
    static func columns(_ rows: [NotificationInsert]) -> [(name: String, type: String)] {
        NotificationInsert.writableColumns.filter { rows[0].values.keys.contains($0.name) }
    }

    /// One parameter per column: the rows' values as an array.
    static func arrays(_ rows: [NotificationInsert]) -> [(any PGParameter)?] {
        columns(rows).map { column -> (any PGParameter)? in rows.map { $0.values[column.name] ?? nil } as [String?] }
    }

    /// The insert of rows that all give the same columns: each row takes an id from the sequence
    /// (evaluated once per row, in the CTE), the columns it leaves out their defaults; answers
    /// each row's id and whether it was made, in the rows' order.
    static func insertStatement(_ rows: [NotificationInsert]) -> String {
        let columns = columns(rows)
        let names = columns.map(\.name).joined(separator: ", ")
        let arrays = columns.enumerated().map { "$\($0.offset + 1)::\($0.element.type)[]" }.joined(separator: ", ")
        return """
            WITH input AS (
                SELECT nextval((SELECT pg_get_serial_sequence('pushq.notifications', 'id'))::regclass) AS id, t.*
                  FROM unnest(\(arrays)) WITH ORDINALITY AS t(\(names)\(names.isEmpty ? "" : ", ")ord)
            ), made AS (
                INSERT INTO pushq.notifications (id\(names.isEmpty ? "" : ", ")\(names))
                SELECT id\(names.isEmpty ? "" : ", ")\(names) FROM input ORDER BY ord
                ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
                RETURNING id
            )
            SELECT input.id, made.id IS NOT NULL AS created FROM input LEFT JOIN made ON made.id = input.id ORDER BY input.ord
            """
    }

    /// Runs `body` in a transaction when `needed` (several statements that must all happen).
    private func inOneTransaction(_ needed: Bool, _ body: () throws -> Void) throws {
        guard needed else { return try body() }
        try execute("BEGIN")
        do {
            try body()
            try execute("COMMIT")
        } catch {
            if inTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Whether the server refused the statement for its data (class 22, data exception, or 23,
    /// integrity constraint violation), not for something else (a lost connection, a timeout).
    static func isDataError(_ error: PGError) -> Bool {
        guard error.code == .server, let state = error.sqlState else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23")
    }

    /// The index of the first row whose prefix fails to insert (a prefix of the batch, inserted
    /// group by group as ``enqueue(_:)`` does), by halving: about log2(n) tries, each in a
    /// transaction rolled back. The whole batch failed already.
    private func firstRefusedRow(_ rows: [NotificationInsert], _ groups: [[Int]]) throws -> Int {
        var (low, high) = (1, rows.count)  // the shortest failing prefix has low...high rows
        while low < high {
            let mid = (low + high) / 2
            if try prefixFails(rows, groups, count: mid) { high = mid } else { low = mid + 1 }
        }
        return high - 1
    }

    private func prefixFails(_ rows: [NotificationInsert], _ groups: [[Int]], count: Int) throws -> Bool {
        try execute("BEGIN")
        defer { try? execute("ROLLBACK") }
        do {
            for group in groups {
                let prefix = group.filter { $0 < count }.map { rows[$0] }
                if !prefix.isEmpty { try query(Self.insertStatement(prefix), Self.arrays(prefix)) }
            }
            return false
        } catch {
            guard Self.isDataError(error) else { throw error }
            return true
        }
    }
}
