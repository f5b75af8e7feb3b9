import Foundation
import PushCore
import PushStore
import Testing
import PGClient

/// Live Activity tokens in `pushq.devices` and the functions that start, update and end
/// activities (schemas 16 to 18), against a real PostgreSQL.
@Suite("Live Activities in SQL")
struct LiveActivityTests {
    static func token(_ n: Int) -> String { String(repeating: String(format: "%02x", n), count: 32) }

    /// Registers `token` with the given kind and ids, `registered` ago (an interval).
    static func register(_ c: PGConnection, _ token: String, kind: String, user: String? = nil, activity: String? = nil,
                         installation: String? = nil, topic: String? = "com.example.app", registered: String = "0 seconds",
                         environment: String = "production") async throws {
        try await c.query("""
            INSERT INTO pushq.devices (device_token, environment, user_ref, topic, kind, activity_id, installation_id, registered_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, now() - $8::interval)
            """, [token, environment, user, topic, kind, activity, installation, registered])
    }

    /// `(invalid_reason, is invalid)` of a registered token.
    static func retirement(_ c: PGConnection, _ token: String) async throws -> (reason: String?, invalid: Bool) {
        let r = try await c.query("""
            SELECT invalid_reason, pushq.token_is_invalid(registered_at, invalidated_at) FROM pushq.devices WHERE device_token = $1
            """, [token])
        return (r.string(0, 0), try r.decode(Bool.self, 0, 1) ?? false)
    }

    /// The rows made for `ids`, by token: push type, priority, topic, the payload's `aps`.
    struct Row { var token: String; var pushType: String; var priority: Int; var topic: String?; var aps: [String: Any] }

    static func rows(_ c: PGConnection, _ ids: PGResult) async throws -> [Row] {
        let list = (0..<ids.count).compactMap { try? ids.decode(Int64.self, $0, 0) }
        let r = try await c.query("""
            SELECT device_token, push_type, priority, topic, payload::text FROM pushq.notifications WHERE id = ANY($1) ORDER BY device_token
            """, [list])
        return try (0..<r.count).map { i in
            let payload = try JSONSerialization.jsonObject(with: Data((r.string(i, 4) ?? "").utf8)) as? [String: Any]
            return Row(token: r.string(i, 0) ?? "", pushType: r.string(i, 1) ?? "", priority: try r.decode(Int.self, i, 2) ?? -1,
                       topic: r.string(i, 3), aps: payload?["aps"] as? [String: Any] ?? [:])
        }
    }

    /// the registry's kinds: a live_activity token needs an activity id and no other kind has one; Live
    /// Activity tokens are APNs'
    @Test("the registry's kinds: a live_activity token needs an activity id, no other kind has one; Live Activity tokens are APNs'")
    func kinds() async throws {
        try await TestDatabase.withConnection { c in
            func refused(_ sql: String, _ parameters: [(any PGParameter)?]) async -> String? {
                let error = await #expect(throws: PGError.self) { try await c.query(sql, parameters) }
                return error?.constraint
            }
            let insert = "INSERT INTO pushq.devices (device_token, kind, activity_id, provider) VALUES ($1, $2, $3, $4)"
            #expect(await refused(insert, [Self.token(1), "widget", nil, "apns"]) == "devices_kind_known")
            #expect(await refused(insert, [Self.token(1), "live_activity", nil, "apns"]) == "devices_activity_id_kind")
            #expect(await refused(insert, [Self.token(1), "device", "match-1", "apns"]) == "devices_activity_id_kind")
            #expect(await refused(insert, [Self.token(1), "live_activity", "match\n1", "apns"]) == "devices_activity_id_shape")
            #expect(await refused(insert, ["fcm-token:1", "push_to_start", nil, "fcm"]) == "devices_kind_apns")
            #expect(await refused("INSERT INTO pushq.devices (device_token, kind, installation_id) VALUES ($1, 'push_to_start', '')",
                                  [Self.token(1)]) == "devices_installation_id_shape")
            try await c.query(insert, [Self.token(1), "live_activity", "match-1", "apns"])
            try await c.query(insert, [Self.token(2), "push_to_start", nil, "apns"])
            #expect(try await c.query("SELECT kind FROM pushq.devices WHERE device_token = $1", [Self.token(2)]).string(0, 0) == "push_to_start")
            try await c.query("INSERT INTO pushq.devices (device_token) VALUES ($1)", [Self.token(3)])
            #expect(try await c.query("SELECT kind FROM pushq.devices WHERE device_token = $1", [Self.token(3)]).string(0, 0) == "device")
        }
    }

    /// a liveactivity payload without the keys its event needs is refused at INSERT, each by a named check;
    /// only waiting rows are checked (a retry is, the claim and the write-back are not)
    @Test("a liveactivity payload without its event's keys is refused at INSERT by a named check; only waiting rows are checked")
    func payloadChecks() async throws {
        try await TestDatabase.withConnection { c in
            let insert = "INSERT INTO pushq.notifications (device_token, push_type, payload, status) VALUES ($1, 'liveactivity', $2, $3)"
            func refused(_ payload: String) async -> String? {
                let error = await #expect(throws: PGError.self) { try await c.query(insert, [Self.token(1), payload, "queued"]) }
                return error?.constraint
            }
            let cases: [(String, String?)] = [
                (#"{"aps": {"event": "update", "content-state": {}}}"#, "notifications_liveactivity_event"),
                (#"{"aps": {"timestamp": "1700000000", "event": "update", "content-state": {}}}"#, "notifications_liveactivity_event"),
                (#"{"aps": {"timestamp": 1700000000, "event": "stop", "content-state": {}}}"#, "notifications_liveactivity_event"),
                (#"{"alert": "hi"}"#, "notifications_liveactivity_event"),
                (#"{"aps": {"timestamp": 1700000000, "event": "update"}}"#, "notifications_liveactivity_content_state"),
                (#"{"aps": {"timestamp": 1700000000, "event": "update", "content-state": [1]}}"#, "notifications_liveactivity_content_state"),
                (#"{"aps": {"timestamp": 1700000000, "event": "end", "content-state": "x"}}"#, "notifications_liveactivity_content_state"),
                (#"{"aps": {"timestamp": 1700000000, "event": "start", "content-state": {}, "attributes": {}, "alert": "Go"}}"#,
                 "notifications_liveactivity_start"),
                (#"{"aps": {"timestamp": 1700000000, "event": "start", "content-state": {}, "attributes-type": "Match", "alert": "Go"}}"#,
                 "notifications_liveactivity_start"),
                (#"{"aps": {"timestamp": 1700000000, "event": "start", "content-state": {}, "attributes-type": "Match", "attributes": {}}}"#,
                 "notifications_liveactivity_start"),
            ]
            for (payload, constraint) in cases {
                #expect(await refused(payload) == constraint, "\(payload)")
            }
            // What each event needs, and no more: an end may leave content-state out.
            for payload in [
                #"{"aps": {"timestamp": 1700000000, "event": "update", "content-state": {"home": 1}}}"#,
                #"{"aps": {"timestamp": 1700000000, "event": "end"}, "custom": 1}"#,
                #"{"aps": {"timestamp": 1700000000.5, "event": "end", "content-state": {}, "dismissal-date": 1700000100}}"#,
                #"{"aps": {"timestamp": 1700000000, "event": "start", "content-state": {}, "attributes-type": "Match", "attributes": {"id": "m"}, "alert": {"title": "Kick-off"}}}"#,
            ] {
                try await c.query(insert, [Self.token(2), payload, "queued"])
            }
            // Other push types are not read; a final row is kept as it is.
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{\"aps\": {\"event\": \"stop\"}}')", [Self.token(3)])
            try await c.query(insert, [Self.token(4), #"{"aps": {}}"#, "failed"])
            #expect(try await c.query("SELECT count(*) FROM pushq.notifications").decode(Int.self, 0, 0) == 6)
            // A row in flight (as a worker's claim leaves it) is not checked again: its write-back to a final
            // status goes through; back to retrying, it is checked as at INSERT.
            try await c.query(insert, [Self.token(5), #"{"aps": {}}"#, "sending"])
            let retry = await #expect(throws: PGError.self) {
                try await c.query("UPDATE pushq.notifications SET status = 'retrying' WHERE device_token = $1", [Self.token(5)])
            }
            #expect(retry?.constraint == "notifications_liveactivity_event")
            try await c.query("UPDATE pushq.notifications SET status = 'sent' WHERE device_token = $1", [Self.token(5)])
            #expect(try await c.query("SELECT status FROM pushq.notifications WHERE device_token = $1", [Self.token(5)]).string(0, 0) == "sent")
        }
    }

    /// start_activity: one start row per valid push-to-start token of the user, priority 10, the payload's
    /// keys; nothing for the user's other tokens
    @Test("start_activity: one start row per valid push-to-start token of the user, priority 10; none for the user's other tokens")
    func start() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.register(c, Self.token(1), kind: "push_to_start", user: "alice")
            try await Self.register(c, Self.token(2), kind: "push_to_start", user: "alice", topic: nil, environment: "development")
            try await Self.register(c, Self.token(3), kind: "device", user: "alice")
            try await Self.register(c, Self.token(4), kind: "live_activity", user: "alice", activity: "match-1")
            try await Self.register(c, Self.token(5), kind: "push_to_start", user: "bob")
            try await Self.register(c, Self.token(6), kind: "push_to_start", user: "alice")
            try await c.query("UPDATE pushq.devices SET invalidated_at = clock_timestamp(), invalid_reason = 'ExpiredToken' WHERE device_token = $1",
                              [Self.token(6)])
            let ids = try await c.query("""
                SELECT * FROM pushq.start_activity('alice', 'MatchAttributes', '{"match": "m-1"}', '{"home": 0, "away": 0}',
                                                   '{"title": "Kick-off"}', input_push_token => true,
                                                   stale_date => '2030-01-01 00:00:00+00', generated_at => '2029-12-31 23:00:00+00')
                """)
            let rows = try await Self.rows(c, ids)
            #expect(rows.map(\.token) == [Self.token(1), Self.token(2)])
            #expect(rows.map(\.topic) == ["com.example.app.push-type.liveactivity", nil])
            for row in rows {
                #expect(row.pushType == "liveactivity" && row.priority == 10)
                #expect(row.aps["event"] as? String == "start")
                #expect(row.aps["timestamp"] as? Int == 1_893_452_400)
                #expect(row.aps["stale-date"] as? Int == 1_893_456_000)
                #expect(row.aps["attributes-type"] as? String == "MatchAttributes")
                #expect((row.aps["attributes"] as? [String: Any])?["match"] as? String == "m-1")
                #expect((row.aps["content-state"] as? [String: Any])?["away"] as? Int == 0)
                #expect((row.aps["alert"] as? [String: Any])?["title"] as? String == "Kick-off")
                #expect(row.aps["input-push-token"] as? Int == 1)
                #expect(row.aps["dismissal-date"] == nil && row.aps["input-push-channel"] == nil)
            }
            let environments = try await c.query("SELECT environment FROM pushq.notifications ORDER BY device_token")
            #expect(environments.string(0, 0) == "production" && environments.string(1, 0) == "development")
            // Without update tokens asked for, no input-push-token; a channel instead.
            let channel = try await Self.rows(c, try await c.query("""
                SELECT * FROM pushq.start_activity('bob', 'MatchAttributes', '{}', '{}', '"Kick-off"', input_push_channel => 'dHJpYWw=')
                """))
            #expect(channel.count == 1 && channel[0].aps["input-push-token"] == nil && channel[0].aps["input-push-channel"] as? String == "dHJpYWw=")
            // A start without the keys Apple needs is refused by the table's check.
            let error = await #expect(throws: PGError.self) {
                try await c.query("SELECT * FROM pushq.start_activity('alice', 'MatchAttributes', '{}', '{}', NULL)")
            }
            #expect(error?.constraint == "notifications_liveactivity_start")
            // enqueue_for_user reaches the ordinary device only.
            let alerts = try await c.query("SELECT * FROM pushq.enqueue_for_user('alice', '{\"aps\": {\"alert\": \"hi\"}}')")
            #expect(try await Self.rows(c, alerts).map(\.token) == [Self.token(3)])
        }
    }

    @Test("update_activity and end_activity reach the activity's valid tokens only; after the end, no update finds them")
    func updateAndEnd() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.register(c, Self.token(1), kind: "live_activity", activity: "match-1")
            try await Self.register(c, Self.token(2), kind: "live_activity", activity: "match-1", environment: "development")
            try await Self.register(c, Self.token(3), kind: "live_activity", activity: "match-2")
            try await Self.register(c, Self.token(4), kind: "live_activity", activity: "match-1")
            try await c.query("UPDATE pushq.devices SET invalidated_at = clock_timestamp(), invalid_reason = 'Unregistered' WHERE device_token = $1",
                              [Self.token(4)])
            try await Self.register(c, Self.token(5), kind: "push_to_start", installation: "match-1")

            let updates = try await Self.rows(c, try await c.query("""
                SELECT * FROM pushq.update_activity('match-1', '{"home": 1, "away": 0}', stale_date => '2030-01-01 00:00:00+00')
                """))
            #expect(updates.map(\.token) == [Self.token(1), Self.token(2)])
            for row in updates {
                #expect(row.pushType == "liveactivity" && row.priority == 5 && row.topic == "com.example.app.push-type.liveactivity")
                #expect(row.aps["event"] as? String == "update" && row.aps["stale-date"] as? Int == 1_893_456_000)
                #expect((row.aps["content-state"] as? [String: Any])?["home"] as? Int == 1)
                #expect(row.aps["alert"] == nil && row.aps["attributes"] == nil)
            }
            let urgent = try await c.query("SELECT * FROM pushq.update_activity('match-2', '{}', alert => '{\"title\": \"Goal\"}', priority => 10)")
            #expect(try await Self.rows(c, urgent).map(\.priority) == [10])

            let ends = try await Self.rows(c, try await c.query("""
                SELECT * FROM pushq.end_activity('match-1', '{"home": 2, "away": 0}', dismissal_date => '2030-01-01 01:00:00+00')
                """))
            #expect(ends.map(\.token) == [Self.token(1), Self.token(2)])
            for row in ends {
                #expect(row.priority == 10 && row.aps["event"] as? String == "end" && row.aps["dismissal-date"] as? Int == 1_893_459_600)
            }
            // Ended, but still valid: the claim must still send the end.
            let ended = try await c.query("""
                SELECT count(*) FROM pushq.devices d JOIN pushq.notifications n ON n.id = d.ended_by AND n.device_token = d.device_token
                 WHERE d.ended_at IS NOT NULL AND NOT pushq.token_is_invalid(d.registered_at, d.invalidated_at)
                   AND n.payload -> 'aps' ->> 'event' = 'end'
                """)
            #expect(try ended.decode(Int.self, 0, 0) == 2)
            #expect(try await c.query("SELECT * FROM pushq.update_activity('match-1', '{}')").count == 0)
            #expect(try await c.query("SELECT * FROM pushq.end_activity('match-1')").count == 0)
            #expect(try await Self.retirement(c, Self.token(3)) == (nil, false))
        }
    }

    /// an ended token is retired ActivityEnded when its end row becomes final, whoever ends it, and not when
    /// another row of it does
    @Test("an ended token is retired ActivityEnded when its end row becomes final, whoever ends it, and not for another row")
    func endedTokenRetiredWhenTheEndIsFinal() async throws {
        try await TestDatabase.withConnection { c in
            for i in 1...3 { try await Self.register(c, Self.token(i), kind: "live_activity", activity: "match-1") }
            let update = try await c.query("SELECT * FROM pushq.update_activity('match-1', '{}')")
            let ends = try await c.query("SELECT * FROM pushq.end_activity('match-1')")
            let endIDs = (0..<ends.count).compactMap { try? ends.decode(Int64.self, $0, 0) }
            // An update row of the token going final retires nothing.
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() WHERE id = ANY($1)",
                              [(0..<update.count).compactMap { try? update.decode(Int64.self, $0, 0) }])
            for i in 1...3 { #expect(try await Self.retirement(c, Self.token(i)) == (nil, false)) }
            // Retried (not final): still valid. Then sent, failed by a producer's cancel, expired.
            try await c.query("UPDATE pushq.notifications SET status = 'retrying' WHERE id = $1", [endIDs[0]])
            #expect(try await Self.retirement(c, Self.token(1)) == (nil, false))
            try await c.query("UPDATE pushq.notifications SET status = 'sent', finished_at = now() WHERE id = $1", [endIDs[0]])
            try await c.query("UPDATE pushq.notifications SET status = 'cancelled', finished_at = now() WHERE id = $1", [endIDs[1]])
            #expect(try await Self.retirement(c, Self.token(1)) == ("ActivityEnded", true))
            #expect(try await Self.retirement(c, Self.token(2)) == ("ActivityEnded", true))
            #expect(try await Self.retirement(c, Self.token(3)) == (nil, false))
            try await c.query("UPDATE pushq.notifications SET status = 'expired', finished_at = now() WHERE id = $1", [endIDs[2]])
            #expect(try await Self.retirement(c, Self.token(3)) == ("ActivityEnded", true))
        }
    }

    /// a push-to-start token replaces the older ones of its installation (same app and environment); the one
    /// registered last wins
    @Test("a push-to-start token replaces the older ones of its installation (same app and environment); the last wins")
    func pushToStartReplaced() async throws {
        try await TestDatabase.withConnection { c in
            try await Self.register(c, Self.token(1), kind: "push_to_start", user: "alice", installation: "phone-1", registered: "2 days")
            try await Self.register(c, Self.token(2), kind: "push_to_start", user: "alice", installation: "phone-2", registered: "2 days")
            try await Self.register(c, Self.token(3), kind: "push_to_start", user: "alice", installation: "phone-1", topic: "com.example.other",
                                    registered: "2 days")
            try await Self.register(c, Self.token(4), kind: "push_to_start", user: "alice", installation: "phone-1", registered: "2 days",
                                    environment: "development")
            try await Self.register(c, Self.token(5), kind: "push_to_start", user: "alice", installation: "phone-1")
            #expect(try await Self.retirement(c, Self.token(1)) == ("Replaced", true))
            for i in 2...5 { #expect(try await Self.retirement(c, Self.token(i)) == (nil, false)) }
            // A registration older than the one that stands (a late retry of the app's request) is the one retired.
            try await Self.register(c, Self.token(6), kind: "push_to_start", user: "alice", installation: "phone-1", registered: "1 hour")
            #expect(try await Self.retirement(c, Self.token(6)) == ("Replaced", true))
            #expect(try await Self.retirement(c, Self.token(5)) == (nil, false))
            // Registered again (the app reports the old token as current): valid again, and it replaces the newer one.
            try await c.query("UPDATE pushq.devices SET registered_at = clock_timestamp() WHERE device_token = $1", [Self.token(1)])
            #expect(try await Self.retirement(c, Self.token(1)) == (nil, false))
            #expect(try await Self.retirement(c, Self.token(5)) == ("Replaced", true))
            // start_activity reaches the standing token of each installation.
            let ids = try await c.query("SELECT * FROM pushq.start_activity('alice', 'A', '{}', '{}', '\"Go\"')")
            #expect(try await Self.rows(c, ids).map(\.token) == [1, 2, 3, 4].map(Self.token))
        }
    }

    /// the pruner's statement retires live_activity tokens older than 12 hours (AgeLimit), through the index,
    /// in batches; nothing else
    @Test("the pruner retires live_activity tokens older than 12 hours (AgeLimit), through the index, in batches; nothing else")
    func ageLimit() async throws {
        try await TestDatabase.withConnection { c in
            let limit = LiveActivityLimits.tokenLifetimeSeconds
            #expect(limit == 12 * 3600)
            for i in 1...3 { try await Self.register(c, Self.token(i), kind: "live_activity", activity: "a-\(i)", registered: "\(Int(limit) + 60) seconds") }
            try await Self.register(c, Self.token(4), kind: "live_activity", activity: "a-4", registered: "\(Int(limit) - 60) seconds")
            try await Self.register(c, Self.token(5), kind: "push_to_start", registered: "30 days")
            try await Self.register(c, Self.token(6), kind: "device", registered: "30 days")
            #expect(try await c.retireAgedActivityTokens(olderThan: limit, limit: 2) == 2)
            #expect(try await c.retireAgedActivityTokens(olderThan: limit, limit: 2) == 1)
            #expect(try await c.retireAgedActivityTokens(olderThan: limit, limit: 2) == 0)
            for i in 1...3 { #expect(try await Self.retirement(c, Self.token(i)) == ("AgeLimit", true)) }
            for i in 4...6 { #expect(try await Self.retirement(c, Self.token(i)) == (nil, false)) }

            // The candidates are found in devices_activity_key, not by reading the table.
            try await c.execute("SET enable_seqscan = off")
            let plan = try await c.query("""
                EXPLAIN SELECT device_token FROM pushq.devices
                 WHERE kind = 'live_activity' AND invalidated_at IS NULL AND registered_at < now() - interval '12 hours' LIMIT 10
                """)
            let text = (0..<plan.count).compactMap { plan.string($0, 0) }.joined(separator: "\n")
            #expect(text.contains("devices_activity_key"), "\(text)")
        }
    }
}
