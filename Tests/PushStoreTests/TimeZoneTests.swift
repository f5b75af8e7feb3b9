import Foundation
import PushCore
@testable import PushStore
import PushTestSupport
import Testing
import PGClient

/// The recipient's time zone (issue 48, contract item 1): `pushq.devices.time_zone`,
/// `pushq.notifications.time_zone` and `user_ref`, the names pushq keeps in `pushq.time_zones`.
@Suite("Time zones")
struct TimeZoneTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    /// The error `sql` fails with.
    static func refusal(_ c: PGConnection, _ sql: String, _ parameters: [(any PGParameter)?] = []) async -> PGError? {
        await #expect(throws: PGError.self) { try await c.query(sql, parameters) }
    }

    // Half-hour (Asia/Kolkata, +05:30) and +14 h (Pacific/Kiritimati) zones are names like the others.
    @Test("time_zone of devices and notifications: an IANA name; an unknown one refused at INSERT and UPDATE, naming the column")
    func unknownRefused() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, user_ref, time_zone) VALUES ($1, 'ann', 'Asia/Kolkata'), ($2, 'ann', 'Pacific/Kiritimati'),
                       ($3, 'ann', NULL)
                """, [Self.token(1), Self.token(2), Self.token(3)])
            try await c.query("""
                INSERT INTO pushq.notifications (device_token, payload, time_zone, user_ref) VALUES ($1, '{}', 'Europe/Berlin', 'ann')
                """, [Self.token(1)])
            for name in ["Mars/Olympus_Mons", "localtime", "posixrules", "Factory", "", "Europe/Berlin "] {
                let device = await Self.refusal(c, "INSERT INTO pushq.devices (device_token, time_zone) VALUES ($1, $2)", [Self.token(9), name])
                #expect(device?.sqlState == "23514" && device?.constraint == "devices_time_zone_known", "\(name): \(String(describing: device))")
                #expect(device?.message.contains("time_zone") == true && device?.message.contains("'\(name)'") == true, "\(String(describing: device?.message))")
                let row = await Self.refusal(c, "INSERT INTO pushq.notifications (device_token, payload, time_zone) VALUES ($1, '{}', $2)",
                                             [Self.token(9), name])
                #expect(row?.sqlState == "23514" && row?.constraint == "notifications_time_zone_known", "\(name): \(String(describing: row))")
                #expect(row?.message.contains("time_zone") == true, "\(String(describing: row?.message))")
            }
            // An UPDATE of the column is checked too; a wrong case is told its spelling.
            let update = await Self.refusal(c, "UPDATE pushq.devices SET time_zone = 'asia/kolkata' WHERE device_token = $1", [Self.token(3)])
            #expect(update?.constraint == "devices_time_zone_known")
            #expect(update?.hint?.contains("Asia/Kolkata") == true, "\(String(describing: update?.hint))")
            let rowUpdate = await Self.refusal(c, "UPDATE pushq.notifications SET time_zone = 'Nowhere/Else'")
            #expect(rowUpdate?.constraint == "notifications_time_zone_known")
            try await c.query("UPDATE pushq.devices SET time_zone = 'America/St_Johns' WHERE device_token = $1", [Self.token(3)])
            let zones = try await c.query("SELECT string_agg(COALESCE(time_zone, '-'), ',' ORDER BY device_token) FROM pushq.devices").string(0, 0)
            #expect(zones == "Asia/Kolkata,Pacific/Kiritimati,America/St_Johns")
        }
    }

    @Test("pushq.time_zones is pg_timezone_names without localtime, posixrules and Factory; pushq migrate copies it again")
    func namesKeptAndRefreshed() async throws {
        try await TestDatabase.withConnection { c in
            let missing = try await c.query("""
                SELECT count(*) FILTER (WHERE z.name IS NULL) AS missing, count(*) AS listed,
                       (SELECT count(*) FROM pushq.time_zones) AS kept
                  FROM pg_timezone_names t LEFT JOIN pushq.time_zones z ON z.name = t.name
                 WHERE t.name NOT IN ('localtime', 'posixrules', 'Factory')
                """).firstRow()
            #expect(try missing.decode(Int.self, "missing") == 0)
            #expect(try missing.decode(Int.self, "kept") == missing.decode(Int.self, "listed"))
            #expect(try await c.query("SELECT count(*) FROM pushq.time_zones WHERE name IN ('localtime', 'posixrules', 'Factory')")
                .decode(Int.self, 0, 0) == 0)
            // As after a PostgreSQL or tzdata upgrade: a name the server lists that the table lacks, and
            // one it no longer lists. The next `pushq migrate` (nothing to apply) copies the list again.
            try await c.execute("DELETE FROM pushq.time_zones WHERE name = 'Asia/Kolkata'; INSERT INTO pushq.time_zones VALUES ('Old/Gone')")
            #expect(await Self.refusal(c, "INSERT INTO pushq.devices (device_token, time_zone) VALUES ($1, 'Asia/Kolkata')", [Self.token(1)]) != nil)
            #expect(try await c.migrate(logger: TestDatabase.logger).isEmpty)
            let names = try await c.query("SELECT string_agg(name, ',' ORDER BY name) FROM pushq.time_zones WHERE name IN ('Asia/Kolkata', 'Old/Gone')")
            #expect(names.string(0, 0) == "Asia/Kolkata")
            try await c.query("INSERT INTO pushq.devices (device_token, time_zone) VALUES ($1, 'Asia/Kolkata')", [Self.token(1)])
        }
    }

    // 2030-12-01 09:00 local is 03:30Z in Kolkata (+05:30), 19:00Z on November 30 in Kiritimati (+14),
    // 12:30Z in St. John's (-03:30), 14:00Z in New York (EST) and 09:00Z without a zone: UTC, though
    // the session's TimeZone is Chatham's (+13:45). On 2030-07-01 New York is on EDT: 13:00Z.
    @Test("enqueue_for_user's local_time: each row at that local time in its device's zone (else UTC), whatever the session zone")
    func localTime() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.devices (device_token, user_ref, time_zone) VALUES
                    ($1, 'ann', 'Asia/Kolkata'), ($2, 'ann', 'Pacific/Kiritimati'), ($3, 'ann', 'America/St_Johns'),
                    ($4, 'ann', 'America/New_York'), ($5, 'ann', NULL)
                """, [Self.token(1), Self.token(2), Self.token(3), Self.token(4), Self.token(5)])
            try await c.execute("SET TimeZone = 'Pacific/Chatham'")
            let ids = try await c.query("SELECT * FROM pushq.enqueue_for_user('ann', '{\"aps\":{}}', local_time => '2030-12-01 09:00')")
            #expect(ids.count == 5)
            let scheduled = """
                SELECT string_agg(COALESCE(time_zone, '-') || '@' || to_char(scheduled_at AT TIME ZONE 'UTC', 'MM-DD HH24:MI') || '@' || user_ref,
                                  ' ' ORDER BY device_token)
                  FROM pushq.notifications WHERE id = ANY($1::bigint[])
                """
            let all = try (0..<ids.count).map { try ids.decode(Int64.self, $0, 0) ?? 0 }
            #expect(try await c.query(scheduled, [all]).string(0, 0) == """
                Asia/Kolkata@12-01 03:30@ann Pacific/Kiritimati@11-30 19:00@ann America/St_Johns@12-01 12:30@ann \
                America/New_York@12-01 14:00@ann -@12-01 09:00@ann
                """)
            let julyIDs = try await c.query("SELECT * FROM pushq.enqueue_for_user('ann', '{}', local_time => '2030-07-01 09:00')")
            let july = try await c.query("""
                SELECT to_char(scheduled_at AT TIME ZONE 'UTC', 'MM-DD HH24:MI') FROM pushq.notifications
                 WHERE id = ANY($1::bigint[]) AND time_zone = 'America/New_York'
                """, [try (0..<julyIDs.count).map { try julyIDs.decode(Int64.self, $0, 0) ?? 0 }])
            #expect(july.string(0, 0) == "07-01 13:00")

            // A local time already past everywhere is due now (the transaction's now()).
            try await c.execute("BEGIN")
            let past = try await c.query("SELECT * FROM pushq.enqueue_for_user('ann', '{}', local_time => '2020-01-01 09:00')")
            let pastIDs = try (0..<past.count).map { try past.decode(Int64.self, $0, 0) ?? 0 }
            let due = try await c.query("SELECT bool_and(scheduled_at = now()), count(*) FROM pushq.notifications WHERE id = ANY($1::bigint[])", [pastIDs])
            try await c.execute("COMMIT")
            #expect(due.string(0, 0) == "t" && due.string(0, 1) == "5")

            // With scheduled_at too: refused, naming local_time's rule; an infinite local time too.
            let both = await Self.refusal(c, "SELECT * FROM pushq.enqueue_for_user('ann', '{}', scheduled_at => now(), local_time => '2030-12-01 09:00')")
            #expect(both?.sqlState == "23514" && both?.constraint == "enqueue_for_user_local_time", "\(String(describing: both))")
            #expect(both?.message.contains("local_time") == true && both?.message.contains("scheduled_at") == true)
            let infinite = await Self.refusal(c, "SELECT * FROM pushq.enqueue_for_user('ann', '{}', local_time => 'infinity')")
            #expect(infinite?.constraint == "enqueue_for_user_local_time")

            // The plain-SQL form of docs/considerate-sending.md gives the same instants.
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, time_zone, user_ref, scheduled_at)
                SELECT d.device_token, '{"aps":{}}', d.time_zone, d.user_ref,
                       '2030-12-01 09:00'::timestamp AT TIME ZONE coalesce(d.time_zone, 'UTC')
                  FROM pushq.devices d WHERE d.user_ref = 'ann'
                """)
            let plain = try await c.query("""
                SELECT count(*) FROM pushq.notifications p JOIN pushq.notifications f USING (device_token)
                 WHERE f.id = ANY($1::bigint[]) AND p.id > (SELECT max(x) FROM unnest($2::bigint[]) x)
                   AND p.scheduled_at = f.scheduled_at AND p.time_zone IS NOT DISTINCT FROM f.time_zone
                """, [all, pastIDs])
            #expect(plain.string(0, 0) == "5")
        }
    }

    // A producer's role that was granted EXECUTE on enqueue_for_user (PUBLIC's revoked) may call the new
    // signature, and a role that was not still may not: from 0.4.0's function, 105 (Web Push) and 106
    // each carry the function's privileges over to the signature they make.
    @Test("enqueue_for_user's privileges carry over to its new signature: a producer's role keeps EXECUTE, PUBLIC stays revoked")
    func enqueuePrivilegesKept() async throws {
        try await TestRoles.with(["producer", "stranger"]) { roles in
            try await TestDatabase.with(migrated: false) { url in
                let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
                _ = try await c.migrate(Migration.all.filter { $0.version <= SchemaHistory.releaseVersions.last! }, logger: TestDatabase.logger)
                let old = try await c.query("""
                    SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.proname = 'enqueue_for_user' AND p.pronamespace = 'pushq'::regnamespace
                    """).string(0, 0) ?? ""
                try await c.execute("REVOKE ALL ON FUNCTION \(old) FROM PUBLIC; GRANT EXECUTE ON FUNCTION \(old) TO \(roles[0])")
                _ = try await c.migrate(logger: TestDatabase.logger)
                let r = try await c.query("""
                    SELECT has_function_privilege($1, p.oid, 'EXECUTE') AS producer, has_function_privilege($2, p.oid, 'EXECUTE') AS stranger,
                           p.oid::regprocedure::text AS signature
                      FROM pg_proc p WHERE p.proname = 'enqueue_for_user' AND p.pronamespace = 'pushq'::regnamespace
                    """, [roles[0], roles[1]]).firstRow()
                let signature = try r.string("signature") ?? ""
                #expect(signature.hasSuffix("timestamp without time zone,text)"), "\(signature)")
                #expect(try r.decode(Bool.self, "producer"))
                #expect(try !r.decode(Bool.self, "stranger"))
                await c.close()
            }
        }
    }

    // Rows as a 0.4.0 producer writes them, and the 0.4.0 worker's statements (this release's claim and
    // write-back name none of the new columns), on a populated table: the columns are added in the
    // catalog only (the tables' files are the same files), every row is kept.
    @Test("migration 106 on a populated table: catalog only, every row kept, 0.4.0 producers' INSERTs and enqueue_for_user work")
    func olderProducersAndWorkers() async throws {
        try await TestDatabase.with(migrated: false) { url in
            let c = try await PGConnection.connect(url, logger: TestDatabase.logger)
            _ = try await c.migrate(Migration.all.filter { $0.version < PGConnection.timeZonesMigration }, logger: TestDatabase.logger)
            try await c.execute("""
                INSERT INTO pushq.notifications (device_token, payload, lane, status)
                SELECT lpad(to_hex(g), 64, 'a'), '{"aps":{}}', 'l' || g % 3, (ARRAY['queued','sent','failed'])[1 + g % 3]
                  FROM generate_series(1, 5000) g;
                INSERT INTO pushq.devices (device_token, user_ref) SELECT lpad(to_hex(g), 64, '0'), 'u' || g % 10 FROM generate_series(1, 500) g;
                """)
            let files = "SELECT pg_relation_filenode('pushq.notifications') || '/' || pg_relation_filenode('pushq.devices')"
            let before = (try await c.query(files).string(0, 0), try await MigrationUpgradeTests.rowsDigest(c))
            #expect(try await c.migrate(logger: TestDatabase.logger).contains(PGConnection.timeZonesMigration))
            #expect(try await c.query(files).string(0, 0) == before.0, "no table rewritten")
            let after = try await MigrationUpgradeTests.rowsDigest(c, columns: """
                n.id, n.device_token, n.payload, n.topic, n.push_type, n.priority, n.expires_at, n.collapse_id, n.apns_id, n.environment,
                n.credential, n.scheduled_at, n.max_attempts, n.metadata, n.status, n.attempts, n.locked_by, n.locked_until, n.last_status,
                n.last_reason, n.apns_unique_id, n.sent_at, n.finished_at, n.created_at, n.provider, n.fcm_message_name, n.lane,
                n.dedupe_key, n.notify_channel, n.channel, n.webpush_keys, n.webpush_location
                """)
            #expect(after == before.1, "every row unchanged")
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE time_zone IS NOT NULL OR user_ref IS NOT NULL")
                .decode(Int.self, 0, 0) == 0)

            // A 0.4.0 producer: a plain INSERT, and enqueue_for_user called by position and by name.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, lane) VALUES ($1, '{\"aps\":{}}', 'l1')", [Self.token(7)])
            let positional = try await c.query("""
                SELECT * FROM pushq.enqueue_for_user('u1', '{"aps":{}}', NULL, 'alert', 10, NULL, NULL, NULL, now(), 5)
                """)
            #expect(positional.count == 50)
            let named = try await c.query("SELECT * FROM pushq.enqueue_for_user('u2', '{\"aps\":{}}', scheduled_at => now() + interval '1 hour')")
            #expect(named.count == 50)
            // Their rows carry the user; a device without a zone gives none.
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications WHERE user_ref IN ('u1', 'u2') AND time_zone IS NULL")
                .decode(Int.self, 0, 0) == 100)

            // The claim and the write-back take a row with a zone as any other.
            try await c.execute("UPDATE pushq.notifications SET status = 'cancelled' WHERE status IN ('queued', 'retrying')")
            try await c.query("INSERT INTO pushq.notifications (device_token, payload, time_zone, user_ref) VALUES ($1, '{}', 'Asia/Kolkata', 'ann')",
                              [Self.token(8)])
            let batch = try await c.claim(limit: 10, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
            #expect(batch.rows.map(\.deviceToken) == [Self.token(8)])
            await c.close()
        }
    }
}
