import PushStore
import Testing

/// Migration 25: the topic, lane and notify-channel rules without bounded repetitions, which
/// PostgreSQL's regular expressions expand into a state per repetition and which every claim
/// and write-back paid (docs/performance.md). Each rule admits what it admitted before; what
/// they refuse is in ``RowConstraintTests/badRows``.
@Suite("Cheap row checks")
struct CheapCheckTests {
    @Test("what the old rules admitted, the new ones admit: the longest names, every character of each class")
    func admittedAsBefore() async throws {
        try await TestDatabase.withConnection { c in
            let rows: [[String: String?]] = [
                ["lane": String(repeating: "l", count: 64)],
                ["lane": "ABCXYZabcxyz0189_.:-"],
                ["lane": "x"],
                ["topic": String(repeating: "t", count: 255)],
                ["topic": "ABCXYZabcxyz0189._-"],
                ["topic": "t"],
                ["notify_channel": "_" + String(repeating: "z", count: 62)],
            ]
            for row in rows {
                let id = try await SchemaConstraintTests.insert(c, row)
                let (column, value) = try #require(row.first)
                #expect(try await c.query("SELECT \(column) FROM pushq.notifications WHERE id = $1", [id]).string(0, 0) == value)
            }
        }
    }

    @Test("no CHECK of pushq.notifications uses a bounded repetition in a regular expression, and every one is validated")
    func noBoundedRepetition() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("""
                SELECT conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint
                 WHERE conrelid = 'pushq.notifications'::regclass AND contype = 'c' ORDER BY conname
                """)
            #expect(r.count > 20)
            for row in 0..<r.count {
                let name = r.string(row, 0) ?? "", definition = r.string(row, 1) ?? ""
                // `{m}`, `{m,}` or `{m,n}` inside a pattern: PostgreSQL builds m (or n) copies of the atom.
                #expect(definition.range(of: #"~\*? '[^']*\{[0-9]+(,[0-9]*)?\}"#, options: .regularExpression) == nil, "\(name): \(definition)")
                #expect(r.string(row, 2) == "t", "\(name) is not validated")
            }
        }
    }
}
