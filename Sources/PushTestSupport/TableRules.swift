import PushStore
import PGClient

/// The rules a row of `pushq.notifications` must follow, where the schema keeps them.
///
/// Since 0.4.0, 29 of them are checked by the trigger function `pushq.notifications_rules()`
/// (one `WHEN … IS FALSE THEN '<name>'` per rule, raised as SQLSTATE 23514 under that name); the
/// two that read a column the worker writes (`notifications_scheduled_at_finite`,
/// `notifications_status_known`) stay CHECK constraints.
public enum TableRules {
    /// A query of one text column: the name of every rule of the trigger functions
    /// (`pushq.notifications_rules()`, none before 0.4.0; `pushq.devices_rules()` since Web Push),
    /// to `UNION` with a query of constraint names.
    public static let functionRulesSQL = """
        SELECT m[1] FROM pg_proc p, regexp_matches(p.prosrc, 'THEN ''((?:notifications|devices)_[a-z0-9_]+)''', 'g') m
         WHERE p.oid IN (to_regproc('pushq.notifications_rules'), to_regproc('pushq.devices_rules'))
        """

    /// The names of the rules in force: the table's validated CHECK constraints and the trigger
    /// function's rules.
    public static func enforced(_ c: PGConnection) async throws -> Set<String> {
        let r = try await c.query("""
            SELECT conname FROM pg_constraint WHERE conrelid = 'pushq.notifications'::regclass AND contype = 'c' AND convalidated
            UNION \(functionRulesSQL)
            """)
        return Set(try r.rows.map { row throws(PGError) in try row.string("conname") }.compactMap { $0 })
    }

    /// Runs `body` with the rules' triggers off, and turns them back on, even when it throws:
    /// the rows it writes are as rows written before a rule existed, or around it by hand.
    @discardableResult
    public static func off<T>(_ c: PGConnection, _ body: () async throws -> T) async throws -> T {
        try await c.execute("""
            ALTER TABLE pushq.notifications DISABLE TRIGGER notifications_rules, DISABLE TRIGGER notifications_rules_update,
                DISABLE TRIGGER notifications_rules_waiting
            """)
        let on = """
            ALTER TABLE pushq.notifications ENABLE TRIGGER notifications_rules, ENABLE TRIGGER notifications_rules_update,
                ENABLE TRIGGER notifications_rules_waiting
            """
        do {
            let value = try await body()
            try await c.execute(on)
            return value
        } catch {
            try? await c.execute(on)
            throw error
        }
    }
}
