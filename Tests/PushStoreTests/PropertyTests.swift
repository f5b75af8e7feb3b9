import PropertyBased
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Connection strings and array parameters over generated values.
@Suite("Property tests: PGURL and array parameters")
struct PropertyTests {
    static let word = Gen.letterOrNumber.string(of: 1...12)

    @Test func withDatabaseReplacesOnlyTheDatabaseOfAURI() async {
        let query = Gen<String?>.element(of: ["", "?sslmode=disable", "?connect_timeout=5&application_name=a/b"]).map { $0! }
        await propertyCheck(count: 500, input: Self.word, Self.word.optional, Gen.int(in: 1...65535).optional, Self.word.optional, query) { host, user, port, db, query in
            let authority = (user.map { $0 + "@" } ?? "") + host + (port.map { ":\($0)" } ?? "")
            for scheme in ["postgresql://", "postgres://"] {
                let url = scheme + authority + (db.map { "/" + $0 } ?? "") + query
                #expect(PGURL.withDatabase(url, "pushq_test_1") == scheme + authority + "/pushq_test_1" + query)
            }
        }
    }

    @Test func withDatabaseAppendsToConninfo() async {
        await propertyCheck(count: 200, input: Self.word, Self.word) { host, db in
            let conninfo = "host=\(host) dbname=\(db)"
            #expect(PGURL.withDatabase(conninfo, "other") == conninfo + " dbname=other")
        }
    }

    /// Any text but NUL (which PostgreSQL's text cannot hold): quotes, backslashes, braces,
    /// commas, spaces, "NULL", every plane.
    static let text = Gen<String?>.element(of: ["\"", "\\", "{", "}", ",", " ", "NULL", "null", "é", "😀", "\u{7F}", "\u{1}", "a"])
        .map { $0! }.array(of: 0...8).map { $0.joined() }

    @Test func textArraysRoundTripThroughPostgreSQL() async throws {
        try await TestDatabase.withConnection { c in
            await propertyCheck(count: 300, input: Self.text.optional(valueRate: 0.85).array(of: 0...6)) { values in
                let r = try await c.query("SELECT x, x IS NULL FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [values])
                var back: [String?] = []
                for i in 0..<r.count { back.append(r.string(i, 1) == "t" ? nil : r.string(i, 0) ?? "") }
                #expect(back == values)
            }
        }
    }

    @Test func anyUnicodeTextRoundTripsThroughPostgreSQL() async throws {
        let scalar = Gen<UInt32>.value(in: 1...0x10FFFF).compactMap { UnicodeScalar($0) }
        let text = scalar.array(of: 0...10).map { String(String.UnicodeScalarView($0)) }
        try await TestDatabase.withConnection { c in
            await propertyCheck(count: 300, input: text.array(of: 0...5), Gen.int64(in: Int64.min...Int64.max).optional.array(of: 0...5)) { strings, numbers in
                let r = try await c.query("SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [strings])
                #expect((0..<r.count).map { r.string($0, 0) ?? "<NULL>" } == strings)
                let n = try await c.query("SELECT x FROM unnest($1::bigint[]) WITH ORDINALITY AS u(x, i) ORDER BY i", [numbers])
                #expect(try (0..<n.count).map { try n.decode(Int64.self, $0, 0) } == numbers)
            }
        }
    }
}
