import Foundation
import PushStore
import Testing
import PGClient

@Suite("libpq layer")
struct PGConnectionTests {
    @Test("parameters: NULL, unicode, 1 MB, and every decoded type")
    func parametersAndDecoding() async throws {
        try await TestDatabase.withConnection { c in
            let unicode = "héllo wörld — 你好 😀 \u{1F1EB}\u{1F1F7} 'quote' \"dq\" \\ back"
            let big = String(repeating: "0123456789abcdef", count: 65_536) // 1 MiB
            let uuid = UUID()
            let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
            let r = try await c.query("""
                SELECT $1::text AS null_text, $2::text AS unicode, $3::text AS big, length($3::text) AS big_length,
                       $4::int AS i, $5::bigint AS b, $6::bool AS t, $7::uuid AS u, $8::timestamptz AS ts,
                       $9::json AS j, $10::smallint AS s, $11::float8 AS d
                """, [nil, unicode, big, Int32(-42), Int64.max, true, uuid, date, #"{"a": [1, "é"]}"#, Int16(7), 1.5])
            #expect(r.count == 1)
            #expect(r.isNull(0, 0))
            #expect(try r.decodeOptional(String.self, 0, "null_text") == nil)
            #expect(try r.decode(String.self, 0, "unicode") == unicode)
            #expect(try r.decode(String.self, 0, "big") == big)
            #expect(try r.decode(Int.self, 0, "big_length") == 1_048_576)
            #expect(try r.decode(Int32.self, 0, "i") == -42)
            #expect(try r.decode(Int64.self, 0, "b") == Int64.max)
            #expect(try r.decode(Bool.self, 0, "t") == true)
            #expect(try r.decode(UUID.self, 0, "u") == uuid)
            let ts = try r.decode(Date.self, 0, "ts")
            #expect(abs(ts.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
            #expect(try r.decode(String.self, 0, "j") == #"{"a": [1, "é"]}"#)
            #expect(try r.decode(Int16.self, 0, "s") == 7)
            #expect(try r.decode(Double.self, 0, "d") == 1.5)
        }
    }

    @Test("a wrong type is reported with the column name")
    func decodeMismatch() async throws {
        try await TestDatabase.withConnection { c in
            let r = try await c.query("SELECT 'abc'::text AS word")
            let error = #expect(throws: PGError.self) { try r.decode(Int.self, 0, "word") }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains("word") == true)
        }
    }

    @Test("timestamps round-trip, including far dates and infinity")
    func timestamps() async throws {
        try await TestDatabase.withConnection { c in
            // Leap days (2000-02-29, 2024-02-29), a century that is not a leap year (1900-03-01),
            // before 1900 and before 1970, the first and last seconds of years 1 and 9999.
            for seconds in [0.0, -1.5, 951_782_400.25, 4_102_444_800.999999, 1_795_000_000.000001, 951_868_799.5,
                            1_709_164_800, -2_203_891_200, -5_000_000_000.75, -62_135_596_800, 253_402_300_799.5] {
                let date = Date(timeIntervalSince1970: seconds)
                let r = try await c.query("SELECT $1::timestamptz, extract(epoch FROM $1::timestamptz)::float8", [date])
                let back = try #require(try r.decode(Date.self, 0, 0))
                #expect(abs(back.timeIntervalSince1970 - seconds) < 0.000_002)
                #expect(abs((try r.decode(Double.self, 0, 1) ?? .nan) - seconds) < 0.000_002)
            }
            let inf = try await c.query("SELECT 'infinity'::timestamptz")
            #expect(try inf.decode(Date.self, 0, 0) == .distantFuture)
        }
    }

    @Test("arrays as parameters, for unnest: quotes, commas, backslashes, unicode, NULL elements")
    func arrays() async throws {
        try await TestDatabase.withConnection { c in
            let ids: [Int64] = [1, 2, 3, Int64.max]
            let texts: [String?] = ["plain", "with,comma", "with \"quote\"", "back\\slash", "{braces}", "é 😀", nil, "NULL", ""]
            let r = try await c.query("""
                SELECT i, t, t IS NULL FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS x(i, t, n) ORDER BY n
                """, [ids, texts])
            #expect(r.count == texts.count)
            for row in 0..<r.count {
                #expect(try r.decode(Int64.self, row, 0) == (row < ids.count ? ids[row] : nil))
                #expect(try r.decode(String.self, row, 1) == texts[row])
                #expect(try r.decode(Bool.self, row, 2) == (texts[row] == nil))
            }
            let uuids = [UUID(), UUID()]
            let u = try await c.query("SELECT array_length($1::uuid[], 1), ($1::uuid[])[2]", [uuids])
            #expect(try u.decode(Int.self, 0, 0) == 2)
            #expect(try u.decode(UUID.self, 0, 1) == uuids[1])
        }
    }

    @Test("arrays of numbers, booleans and optionals, written unquoted: every width's extremes, zero, negatives, NULL elements")
    func unquotedArrays() async throws {
        let int64s: [Int64] = [0, -1, 9, 10, -10, 1_234_567_890_123, Int64.min, Int64.max]
        let ints: [Int?] = [Int.min, nil, 0, Int.max, -7]
        let int32s: [Int32] = [Int32.min, Int32.max, 0, 100]
        let int16s: [Int16?] = [Int16.min, Int16.max, nil]
        let bools: [Bool?] = [true, false, nil]
        let doubles: [Double] = [0.5, -2, 1e-7, 123_456.789]
        #expect(int64s.pgText == "{0,-1,9,10,-10,1234567890123,-9223372036854775808,9223372036854775807}")
        #expect(ints.pgText == "{-9223372036854775808,NULL,0,9223372036854775807,-7}")
        #expect(bools.pgText == "{t,f,NULL}")
        #expect([Int64]().pgText == "{}")
        try await TestDatabase.withConnection { c in
            let r = try await c.query("""
                SELECT $1::bigint[] = $7::bigint[], array_to_string($2::bigint[], ',', 'NULL'), $3::integer[]::text,
                       array_to_string($4::smallint[], ',', 'NULL'), array_to_string($5::boolean[], ',', 'NULL'), $6::float8[]::text
                """, [int64s, ints, int32s, int16s, bools, doubles, int64s.map { String($0) }])
            #expect(try r.decode(Bool.self, 0, 0) == true)
            #expect(try r.decode(String.self, 0, 1) == ints.map { $0.map(String.init) ?? "NULL" }.joined(separator: ","))
            #expect(try r.decode(String.self, 0, 2) == "{-2147483648,2147483647,0,100}")
            #expect(try r.decode(String.self, 0, 3) == "-32768,32767,NULL")
            #expect(try r.decode(String.self, 0, 4) == "t,f,NULL")
            #expect(try r.decode(String.self, 0, 5) == "{0.5,-2,1e-07,123456.789}")
        }
    }

    @Test("a NUL character in a parameter is refused before sending")
    func nulRefused() async throws {
        try await TestDatabase.withConnection { c in
            let error = await #expect(throws: PGError.self) { try await c.query("SELECT $1::text", ["a\u{0}b"]) }
            #expect(error?.code == .invalidValue)
            #expect(error?.message.contains("$1") == true)
        }
    }

    @Test("errors carry SQLSTATE, message, detail, table and constraint")
    func errorFields() async throws {
        try await TestDatabase.withConnection { c in
            try await c.execute("CREATE TABLE t (id int CONSTRAINT t_id_positive CHECK (id > 0), k text UNIQUE)")
            let check = await #expect(throws: PGError.self) { try await c.query("INSERT INTO t (id) VALUES ($1)", [-1]) }
            #expect(check?.code == .server)
            #expect(check?.sqlState == "23514")
            #expect(check?.constraint == "t_id_positive")
            #expect(check?.table == "t")
            #expect(check?.detail?.contains("Failing row") == true)
            #expect(check?.message.contains("t_id_positive") == true)

            try await c.query("INSERT INTO t (id, k) VALUES (1, 'a')")
            let unique = await #expect(throws: PGError.self) { try await c.query("INSERT INTO t (id, k) VALUES (2, 'a')") }
            #expect(unique?.sqlState == "23505")
            #expect(unique?.constraint == "t_k_key")
            #expect(unique?.detail == "Key (k)=(a) already exists.")

            let syntax = await #expect(throws: PGError.self) { try await c.query("SELEC 1") }
            #expect(syntax?.sqlState == "42601")
            // The connection is still usable after errors.
            #expect(try await c.query("SELECT 1").decode(Int.self, 0, 0) == 1)
        }
    }

    @Test("a transaction rolls back when its body throws")
    func transactionRollback() async throws {
        try await TestDatabase.withConnection { c in
            try await c.execute("CREATE TABLE t (id int)")
            struct Boom: Error {}
            await #expect(throws: Boom.self) {
                try await c.transaction { tx in
                    try tx.query("INSERT INTO t VALUES (1)")
                    throw Boom()
                }
            }
            #expect(try await c.query("SELECT count(*) FROM t").decode(Int.self, 0, 0) == 0)
            #expect(await c.inTransaction == false)
            try await c.transaction { tx in try tx.query("INSERT INTO t VALUES (2)") }
            #expect(try await c.query("SELECT count(*) FROM t").decode(Int.self, 0, 0) == 1)
        }
    }

    @Test("LISTEN/NOTIFY delivers a notification with its payload")
    func listenNotify() async throws {
        try await TestDatabase.with { url in
            let listener = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let sender = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await listener.listen("pushq test channel")
            try await sender.query("SELECT pg_notify($1, $2)", ["pushq test channel", "héllo"])
            var received: [PGNotification] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while received.isEmpty && ContinuousClock.now < deadline {
                received = try await listener.waitForNotifications(timeout: .seconds(5))
            }
            #expect(received == [PGNotification(channel: "pushq test channel", payload: "héllo", senderPID: await sender.backendPID)])
            await listener.close()
            await sender.close()
        }
    }

    @Test("interrupt() wakes a wait long before its timeout")
    func interruptWakesWait() async throws {
        try await TestDatabase.withConnection { c in
            try await c.listen("nothing_comes")
            let start = ContinuousClock.now
            async let waited = c.waitForNotifications(timeout: .seconds(60))
            c.interrupt()
            let received = try await waited
            #expect(received.isEmpty)
            #expect(ContinuousClock.now - start < .seconds(30))
        }
    }

    @Test("a bad connection string fails with libpq's message, without the password")
    func connectFailure() async throws {
        let error = await #expect(throws: PGError.self) {
            _ = try await PGConnection.connect("postgresql://someone:s3cretpw@127.0.0.1:1/nowhere", logger: TestDatabase.logger)
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.description.contains("127.0.0.1") == true)
        #expect(error?.description.contains("s3cretpw") == false)
    }
}
