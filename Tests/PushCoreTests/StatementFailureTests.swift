import PushCore
import Testing

@Suite("Statement failures")
struct StatementFailureTests {
    @Test("each SQLSTATE is classified as the \"Faults that last\" part of docs/faults.md says", arguments: [
        ("22008", StatementFailure.deterministic), ("22P02", .deterministic), ("23514", .deterministic), ("23505", .deterministic),
        ("P0001", .deterministic), ("P0004", .deterministic),
        ("25006", .readOnly),
        ("42501", .configuration), ("42P01", .configuration), ("42703", .configuration), ("42883", .configuration),
        ("28000", .configuration), ("28P01", .configuration), ("3D000", .configuration), ("3F000", .configuration),
        ("40001", .transient), ("40P01", .transient), ("57P01", .transient), ("57014", .transient), ("08006", .transient),
        ("25P02", .transient), ("53300", .transient), ("57P03", .transient),
    ] as [(String, StatementFailure)])
    func classified(sqlState: String, expected: StatementFailure) {
        #expect(StatementFailure(sqlState: sqlState) == expected)
    }

    @Test("no SQLSTATE (a lost connection, a client error) is transient")
    func noSQLState() {
        #expect(StatementFailure(sqlState: nil) == .transient)
    }

    /// the fix names what to do: a GRANT for 42501, pushq migrate for a missing table, the URL for 28xxx and
    /// 25006; none for data or transient failures
    @Test("the fix names what to do: a GRANT, pushq migrate, or the URL; none for data or transient failures")
    func fixes() throws {
        #expect(try #require(StatementFailure.fix(sqlState: "42501")).contains("pushq migrate --print-grants <role> --for worker"))
        #expect(try #require(StatementFailure.fix(sqlState: "42P01")).contains("pushq migrate"))
        #expect(try #require(StatementFailure.fix(sqlState: "28P01")).contains("PUSHQ_DATABASE_URL"))
        #expect(try #require(StatementFailure.fix(sqlState: "25006")).contains("target_session_attrs=read-write"))
        for state in ["23514", "P0001", "40001", nil] as [String?] { #expect(StatementFailure.fix(sqlState: state) == nil) }
    }
}
