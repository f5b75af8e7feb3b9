import Foundation
import PGClient
import Testing

/// Rows read by column name (`PGResult.rows`, `PGRow`): what PushStore decodes every result with.
@Suite("rows by column name")
struct PGRowTests {
    @Test("columns are found by name or alias, in any order, on every row")
    func lookup() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("""
                SELECT g AS n, 'row ' || g AS label, g * 10 AS tens, g % 2 = 0 AS even
                FROM generate_series(1, 5) g ORDER BY g
                """)
            #expect(r.rows.count == 5)
            var seen: [(Int, String, Int64, Bool)] = []
            for row in r.rows {
                // Read against the SELECT's order: the name decides, not the position.
                seen.append((try row.decode(Int.self, "n"), try row.decode(String.self, "label"),
                             try row.decode(Int64.self, "tens"), try row.decode(Bool.self, "even")))
            }
            #expect(seen.map(\.0) == [1, 2, 3, 4, 5])
            #expect(seen.map(\.1) == ["row 1", "row 2", "row 3", "row 4", "row 5"])
            #expect(seen.map(\.2) == [10, 20, 30, 40, 50])
            #expect(seen.map(\.3) == [false, true, false, true, false])
            #expect(try r.rows.map { try $0.decode(Int.self, "tens") }.reversed() == [50, 40, 30, 20, 10])
            #expect(try r.firstRow().decode(String.self, "label") == "row 1")
        }
    }

    @Test("two columns of one name: the first is read, as PQfnumber does")
    func duplicateNames() async throws {
        try await TestDatabase.withConnection { c in
            let row = try await c.query("SELECT 1 AS v, 2 AS v").firstRow()
            #expect(try row.decode(Int.self, "v") == 1)
        }
    }

    @Test("a missing column throws an error naming it and the result's columns")
    func missingColumn() async throws {
        try await TestDatabase.withConnection { c in
            let row = try await c.query("SELECT 1 AS id, 'sent' AS status").firstRow()
            for read in [{ _ = try row.decode(Int.self, "attempts") }, { _ = try row.decode(Int?.self, "attempts") },
                         { _ = try row.string("attempts") }, { _ = try row.bytes("attempts") }, { _ = try row.isNull("attempts") }]
                as [() throws -> Void] {
                let error = #expect(throws: PGError.self) { try read() }
                #expect(error?.code == .invalidValue)
                #expect(error?.column == "attempts")
                #expect(error?.message == "the result has no column attempts (its columns: id, status)")
            }
            // Names are the server's: an unquoted alias is lower-case, and no other spelling finds it.
            #expect(throws: PGError.self) { try row.decode(String.self, "STATUS") }
        }
    }

    @Test("NULL: an error naming the column where a value is required, nil where it may be NULL")
    func nulls() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("SELECT x AS topic, NULL::int AS priority FROM (VALUES ('a'), (NULL)) v(x) ORDER BY x NULLS LAST")
            let first = r.rows[0], second = r.rows[1]
            #expect(try first.decode(String.self, "topic") == "a")
            #expect(try first.isNull("topic") == false)
            #expect(try second.isNull("topic"))
            #expect(try second.decode(String?.self, "topic") == nil)
            #expect(try second.string("topic") == nil)
            #expect(try second.bytes("topic") == nil)
            #expect(try first.decode(Int?.self, "priority") == nil)
            let error = #expect(throws: PGError.self) { try second.decode(String.self, "topic") }
            #expect(error?.code == .invalidValue)
            #expect(error?.column == "topic")
            #expect(error?.message == "column topic of row 1 is NULL where a String is required")
        }
    }

    @Test("every decodable type, and text that is not the type asked for")
    func types() async throws {
        try await TestDatabase.withConnection { c in
            let uuid = UUID()
            let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
            let row = try await c.query("""
                SELECT $1::text AS s, $2::int AS i32, $3::bigint AS i64, $4::smallint AS i16, 42 AS i, $5::float8 AS d,
                       $6::bool AS t, false AS f, $7::uuid AS u, $8::timestamptz AS ts, 'é{}'::text AS raw, 'secret-token' AS token
                """, ["héllo", Int32(-42), Int64.max, Int16(7), 1.5, true, uuid, date]).firstRow()
            #expect(try row.decode(String.self, "s") == "héllo")
            #expect(try row.decode(Int32.self, "i32") == -42)
            #expect(try row.decode(Int64.self, "i64") == Int64.max)
            #expect(try row.decode(Int16.self, "i16") == 7)
            #expect(try row.decode(Int.self, "i") == 42)
            #expect(try row.decode(Double.self, "d") == 1.5)
            #expect(try row.decode(Bool.self, "t") == true)
            #expect(try row.decode(Bool.self, "f") == false)
            #expect(try row.decode(UUID.self, "u") == uuid)
            #expect(abs(try row.decode(Date.self, "ts").timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
            #expect(try row.bytes("raw") == Array("é{}".utf8))
            #expect(try row.string("i") == "42")
            // Text that is not the type: the error names the column, never the value (it may be a token).
            let error = #expect(throws: PGError.self) { try row.decode(Int.self, "token") }
            #expect(error?.column == "token")
            #expect(error?.message == "column token of row 0 is not a Int")
            #expect(error.map { "\($0)".contains("secret") } == false)
            #expect(throws: PGError.self) { try row.decode(Int16?.self, "i64") }
        }
    }

    @Test("firstRow of a statement that returned no row throws")
    func noRow() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("SELECT 1 AS one WHERE false")
            #expect(r.rows.isEmpty)
            let error = #expect(throws: PGError.self) { try r.firstRow() }
            #expect(error?.code == .invalidValue)
        }
    }
}
