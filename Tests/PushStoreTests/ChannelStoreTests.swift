import Foundation
import PushCore
import PushStore
import PushTestSupport
import Testing
import PGClient

/// Broadcast channels in the database (migrations 19–21): the channel claim and its fenced
/// write-back, broadcast rows waiting for their channel, deletion, the checks at INSERT, the
/// reconciliation's bookkeeping and `pushq status`'s figures.
@Suite("Broadcast channels in the store")
struct ChannelStoreTests {
    static let payload = #"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#

    func claimChannels(_ c: PGConnection, worker: String = "w1") async throws -> [ClaimedChannel] {
        try await c.claimChannels(limit: 10, workerID: worker, leaseSeconds: 60, credentials: ["default"],
                                  defaultEnvironment: .production)
    }

    func claimRows(_ c: PGConnection) async throws -> ClaimBatch {
        try await c.claim(limit: 100, workerID: "w1", leaseSeconds: 60, credentials: [.apns: ["default"]], defaultEnvironment: .production)
    }

    func status(_ c: PGConnection, _ name: String) async throws -> String? {
        try await c.query("SELECT status FROM pushq.channels WHERE name = $1", [name]).string(0, 0)
    }

    @Test("three workers claiming at once: one of them gets the new channel, with its lease; the others get nothing")
    func claimedOnce() async throws {
        try await TestDatabase.with { url in
            let connections = try await withThrowingTaskGroup(of: PGConnection.self) { group in
                for _ in 0..<3 { group.addTask { try await PGConnection.connect(url, logger: TestDatabase.logger) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await connections[0].query("INSERT INTO pushq.channels (name, topic) VALUES ('match', 'com.example.app')")
            let claims = try await withThrowingTaskGroup(of: [ClaimedChannel].self) { group in
                for (i, c) in connections.enumerated() { group.addTask { try await claimChannels(c, worker: "w\(i)") } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(claims.count == 1)
            #expect(claims.first?.operation == .create && claims.first?.attempts == 1 && claims.first?.topic == "com.example.app")
            #expect(try await claimChannels(connections[1]).isEmpty, "held under its lease")
            for c in connections { await c.close() }
        }
    }

    @Test("created: active with Apple's id, attempts reset; a write-back under another lease changes nothing")
    func createdFenced() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            let claim = try #require(try await claimChannels(c).first)
            let stale = ChannelCompletion(id: claim.id, lease: claim.lease - 1, result: .created(apnsChannelID: "b2xk"), httpStatus: 201, reason: nil)
            #expect(try await c.completeChannel(stale, workerID: "w1") == nil)
            let done = ChannelCompletion(id: claim.id, lease: claim.lease, result: .created(apnsChannelID: "c29tZQ=="), httpStatus: 201,
                                         reason: nil, requestID: "1d2c3b4a-0000-4000-8000-000000000001")
            #expect(try await c.completeChannel(done, workerID: "w1") == "active")
            let row = try await c.query("SELECT apns_channel_id, attempts, locked_by, apns_request_id FROM pushq.channels")
            #expect(row.string(0, 0) == "c29tZQ==" && row.string(0, 1) == "0" && row.isNull(0, 2))
            #expect(row.string(0, 3) == "1d2c3b4a-0000-4000-8000-000000000001")
            #expect(try await claimChannels(c).isEmpty, "an active channel has nothing due")
        }
    }

    @Test("retry: due again later, the attempt counted; refund: the attempt given back; failed: the waiting rows end ChannelFailed")
    func retryRefundFail() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            let waiting = try await c.query("SELECT pushq.broadcast('match', $1)", [Self.payload]).string(0, 0)
            var claim = try #require(try await claimChannels(c).first)
            try await c.completeChannel(ChannelCompletion(id: claim.id, lease: claim.lease, result: .retry(afterSeconds: 0, refund: true),
                                                          httpStatus: nil, reason: "ConnectionFailed"), workerID: "w1")
            claim = try #require(try await claimChannels(c).first)
            #expect(claim.attempts == 1, "the refunded attempt was given back")
            try await c.completeChannel(ChannelCompletion(id: claim.id, lease: claim.lease, result: .retry(afterSeconds: 3600, refund: false),
                                                          httpStatus: 500, reason: "InternalServerError"), workerID: "w1")
            #expect(try await claimChannels(c).isEmpty, "due in an hour")
            try await c.query("UPDATE pushq.channels SET scheduled_at = now()")
            claim = try #require(try await claimChannels(c).first)
            #expect(claim.attempts == 2)
            #expect(try await c.completeChannel(ChannelCompletion(id: claim.id, lease: claim.lease, result: .failed, httpStatus: 400,
                                                                  reason: "CannotCreateChannelConfig"), workerID: "w1") == "failed")
            let row = try await c.query("SELECT status, last_reason FROM pushq.notifications WHERE id = $1", [Int64(waiting ?? "") ?? 0])
            #expect(row.string(0, 0) == "failed" && row.string(0, 1) == "ChannelFailed")
        }
    }

    /// a broadcast row waits, unclaimed, until its channel is active; then it is claimed with the channel's
    /// id and storage policy
    @Test("a broadcast row waits, unclaimed, until its channel is active; then it is claimed with the channel's id and policy")
    func broadcastWaits() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name, message_storage_policy) VALUES ('match', 0)")
            let id = try #require(Int64(try await c.query("SELECT pushq.broadcast('match', $1, priority => 5)", [Self.payload]).string(0, 0) ?? ""))
            try await c.query("INSERT INTO pushq.notifications (device_token, payload) VALUES ($1, '{}')", [String(repeating: "ab", count: 32)])
            let first = try await claimRows(c)
            #expect(first.map(\.id).contains(id) == false && first.count == 1, "the device row goes, the broadcast waits")
            #expect(first.first?.channelID == nil && first.first?.channelStoragePolicy == nil)
            let claim = try #require(try await claimChannels(c).first)
            try await c.completeChannel(ChannelCompletion(id: claim.id, lease: claim.lease, result: .created(apnsChannelID: "Y2hhbm5lbA=="),
                                                          httpStatus: 201, reason: nil), workerID: "w1")
            let row = try #require(try await claimRows(c).first)
            #expect(row.id == id && row.verdict == .send && row.channelID == "Y2hhbm5lbA==" && row.channelStoragePolicy == 0)
            #expect(row.deviceToken.isEmpty && row.pushType == .liveactivity && row.priority == 5)
        }
    }

    /// deleting a channel ends its waiting rows failed/ChannelDeleted, and a row inserted later ends so at
    /// once; rows of other channels wait on
    @Test("deleting a channel ends its waiting rows failed/ChannelDeleted, and later rows at once; other channels' rows wait on")
    func deletionEndsRows() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name) VALUES ('match'), ('other')")
            try await c.query("SELECT pushq.broadcast('match', $1) FROM generate_series(1, 3)", [Self.payload])
            try await c.query("SELECT pushq.broadcast('other', $1)", [Self.payload])
            #expect(try await c.query("SELECT pushq.delete_channel('match')").string(0, 0) == "deleted", "never created at Apple")
            try await c.query("SELECT pushq.broadcast('match', $1)", [Self.payload])
            let rows = try await c.query("""
                SELECT channel, status, last_reason, count(*) FROM pushq.notifications GROUP BY 1, 2, 3 ORDER BY 1
                """)
            #expect(rows.count == 2)
            #expect(rows.string(0, 0) == "match" && rows.string(0, 1) == "failed" && rows.string(0, 2) == "ChannelDeleted" && rows.string(0, 3) == "4")
            #expect(rows.string(1, 0) == "other" && rows.string(1, 1) == "queued")
            #expect(try await c.query("SELECT deleted_at IS NOT NULL FROM pushq.channels WHERE name = 'match'").string(0, 0) == "t")
        }
    }

    /// deletion asked while the create is in flight: the created channel keeps its id and stays deleting; the
    /// next claim is its delete
    @Test("a deletion asked during the create: the created channel keeps its id and stays deleting; the next claim is its delete")
    func deletionDuringCreate() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            let create = try #require(try await claimChannels(c).first)
            #expect(try await c.query("SELECT pushq.delete_channel('match')").string(0, 0) == "deleting")
            #expect(try await c.completeChannel(ChannelCompletion(id: create.id, lease: create.lease, result: .created(apnsChannelID: "aWQ="),
                                                                  httpStatus: 201, reason: nil), workerID: "w1") == "deleting")
            let delete = try #require(try await claimChannels(c).first)
            #expect(delete.operation == .delete && delete.apnsChannelID == "aWQ=" && delete.attempts == 1)
            #expect(try await c.completeChannel(ChannelCompletion(id: delete.id, lease: delete.lease, result: .deleted, httpStatus: 204,
                                                                  reason: nil), workerID: "w1") == "deleted")
        }
    }

    /// a delete with nothing to delete at Apple counts no attempt; a held credential's channels are not
    /// claimed, an outage's are
    @Test("a delete with nothing to delete at Apple counts no attempt; a held credential's channels wait, an outage's do not")
    func deleteWithoutIDAndHolds() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name, status) VALUES ('a', 'deleting')")
            try await Holds.add(c, [Endpoint(credential: "default", environment: .production)])
            #expect(try await claimChannels(c).isEmpty, "its credential is held in its environment")
            try await c.query("UPDATE pushq.credential_pauses SET kind = 'outage'")
            #expect(try await claimChannels(c).first?.attempts == 0, "an outage of the push host does not hold the management API")
        }
    }

    /// INSERT refuses: a row with both or neither target, a broadcast of another push type, over 5 KB, to an
    /// unknown channel, or of another credential or environment; 5 KB itself passes
    @Test("INSERT refuses broadcasts that break the channel rules; 5 KB itself passes")
    func constraints() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("INSERT INTO pushq.channels (name, credential, environment) VALUES ('match', 'team', 'development')")
            func refused(_ sql: String, _ parameters: [(any PGParameter)?] = []) async -> String? {
                do { try await c.query(sql, parameters); return nil } catch { return error.constraint }
            }
            let token = String(repeating: "ab", count: 32)
            #expect(await refused("INSERT INTO pushq.notifications (device_token, channel, payload, push_type) VALUES ($1, 'match', $2, 'liveactivity')",
                                  [token, Self.payload]) == "notifications_target")
            #expect(await refused("INSERT INTO pushq.notifications (payload) VALUES ('{}')") == "notifications_target")
            #expect(await refused("INSERT INTO pushq.notifications (channel, payload) VALUES ('match', '{}')") == "notifications_broadcast_push_type")
            let big = String(Self.payload.dropLast()) + ",\"x\":\"" + String(repeating: "a", count: 5120 - Self.payload.utf8.count - 7) + "\"}"
            #expect(big.utf8.count == 5120)
            #expect(await refused("SELECT pushq.broadcast('match', $1)", [big]) == nil)
            #expect(await refused("SELECT pushq.broadcast('match', $1)", [big + " "]) == "notifications_broadcast_payload_size")
            #expect(await refused("INSERT INTO pushq.notifications (device_token, payload, push_type) VALUES ($1, $2, 'liveactivity')",
                                  [token, big]) == "notifications_payload_size", "a device row keeps its 4 KB")
            #expect(await refused("SELECT pushq.broadcast('nope', $1)", [Self.payload]) == "notifications_channel_known")
            #expect(await refused("INSERT INTO pushq.notifications (channel, payload, push_type, credential) VALUES ('match', '{}', 'liveactivity', 'other')")
                    == "notifications_channel_endpoint")
            let copied = try await c.query("SELECT credential, environment FROM pushq.notifications WHERE channel = 'match'")
            #expect(copied.string(0, 0) == "team" && copied.string(0, 1) == "development", "the row took its channel's credential and environment")
            #expect(await refused("INSERT INTO pushq.channels (name, message_storage_policy) VALUES ('x', 2)") == "channels_message_storage_policy_known")
        }
    }

    @Test("the reconciliation is taken by one worker a day; it records the ids Apple has that no live channel has")
    func reconciliation() async throws {
        try await TestDatabase.withConnection { c in
            try await c.query("""
                INSERT INTO pushq.channels (name, status, apns_channel_id) VALUES ('a', 'active', 'QQ=='), ('b', 'deleted', 'Qg==')
                """)
            let scopes = try await c.channelScopes(credentials: ["default"], defaultEnvironment: .production)
            #expect(scopes == [ChannelScope(credential: "default", environment: .production, topic: nil)])
            #expect(try await c.takeReconciliation(credential: "default", environment: .production, topic: "com.example.app",
                                                   workerID: "w1", everySeconds: 86400))
            #expect(try await !c.takeReconciliation(credential: "default", environment: .production, topic: "com.example.app",
                                                    workerID: "w2", everySeconds: 86400))
            let unknown = try await c.recordReconciliation(credential: "default", environment: .production, topic: "com.example.app",
                                                           listed: ["QQ==", "Qg==", "Qw=="], reason: nil)
            #expect(unknown == ["Qg==", "Qw=="], "b was deleted here but Apple still lists it; Qw== was never ours")
            try await c.recordReconciliation(credential: "default", environment: .production, topic: "com.example.app",
                                             listed: nil, reason: "InternalServerError")
            let report = try #require(try await c.reconciliations().first)
            #expect(report.unknownIDs == ["Qg==", "Qw=="] && report.listed == 3 && report.lastReason == "InternalServerError")
            let status = try await c.channelsStatus()
            #expect(status.counts["active"] == 1 && status.counts["deleted"] == 1 && status.counts["creating"] == 0)
            #expect(status.channels.map(\.name) == ["a"] && status.reconciliations.count == 1)
        }
    }

    @Test("creates of one app are claimed one at a time across workers, another app's go on; a claim returns the unanswered create")
    func createsOfOneAppOneAtATime() async throws {
        try await TestDatabase.with { url in
            let a = try await PGConnection.connect(url, logger: TestDatabase.logger)
            let b = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await a.query("INSERT INTO pushq.channels (name, topic) VALUES ('m1', 'com.example.app'), ('m2', 'com.example.app'), ('o1', 'com.example.other')")
            func one(_ c: PGConnection, _ worker: String) async throws -> [ClaimedChannel] {
                try await c.claimChannels(limit: 1, workerID: worker, leaseSeconds: 60, credentials: ["default"], defaultEnvironment: .production)
            }
            let first = try await one(a, "w1")
            #expect(first.map(\.name) == ["m1"] && first.first?.unansweredCreate == nil)
            // m2 waits while m1's create is held; the other app's channel does not.
            #expect(try await one(b, "w2").map(\.name) == ["o1"])
            #expect(try await one(b, "w2").isEmpty, "m2 is not claimed while m1 is being created")
            // m1's create is sent and its answer lost: a retry, the row claimable again with its record.
            let m1 = try #require(first.first)
            let lease = try #require(try await a.recordCreateAttempt(m1, requestID: "0a9e1c66-7d1e-4b5c-9a43-1f0e2d3c4b5a", workerID: "w1", leaseSeconds: 60))
            var sent = m1
            sent.lease = lease
            try await a.completeChannel(ChannelCompletion(id: m1.id, lease: lease, result: .retry(afterSeconds: 0, refund: false),
                                                          httpStatus: nil, reason: "Timeout"), workerID: "w1")
            try await a.query("UPDATE pushq.channels SET scheduled_at = now() + interval '1 hour' WHERE name = 'm2'")
            let again = try await one(b, "w2")
            #expect(again.map(\.name) == ["m1"] && again.first?.unansweredCreate != nil, "claimed again with its unanswered create")
            #expect(try await a.renewChannelLease(sent, workerID: "w1", leaseSeconds: 60) == nil, "the old lease is gone")
            await a.close()
            await b.close()
        }
    }
}
