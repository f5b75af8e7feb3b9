import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Broadcast channels end to end: workers create and delete channels on the mock's
/// channel-management port, broadcast rows wait for their channel and go to the push port, and
/// the reconciliation finds the channels the mock has that `pushq.channels` does not.
@Suite("Broadcast channels end to end")
struct ChannelEndToEndTests {
    static let update = #"{"aps":{"event":"update","timestamp":1767225600,"content-state":{"home":1,"away":0}}}"#

    func configuration(_ url: String, _ mock: MockPushServer, _ apnsURL: String, id: String = "test-worker") throws -> WorkerConfiguration {
        var c = try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: id)
        c.channelsBaseURL = mock.managementURL
        c.outageProbeBaseSeconds = 0.05
        c.outageProbeCapSeconds = 0.1
        return c
    }

    /// A mock, a fresh database and a connection to it, for `body`.
    func withChannels(_ body: (MockPushServer, String, String, PGConnection) async throws -> Void) async throws {
        try await withMock { mock, apnsURL in
            try await TestDatabase.with { url in
                let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
                do { try await body(mock, apnsURL, url, db) } catch {
                    await db.close()
                    throw error
                }
                await db.close()
            }
        }
    }

    func channelRow(_ c: PGConnection, _ name: String) async throws -> (status: String?, id: String?, attempts: Int?) {
        let r = try await c.query("SELECT status, apns_channel_id, attempts FROM pushq.channels WHERE name = $1", [name])
        return (r.string(0, 0), r.string(0, 1), try r.decode(Int.self, 0, 2))
    }

    func creates(_ mock: MockPushServer) -> Int {
        mock.channelRequests().filter { $0.method == "POST" && $0.path.hasSuffix("/channels") }.count
    }

    @Test("three workers see a new channel at the same moment: it is created once at Apple, and its row gets that channel's id")
    func createdOnce() async throws {
        try await withChannels { mock, apnsURL, url, db in
            try await withWorker(try configuration(url, mock, apnsURL, id: "w1")) { _ in
                try await withWorker(try configuration(url, mock, apnsURL, id: "w2")) { _ in
                    try await withWorker(try configuration(url, mock, apnsURL, id: "w3")) { _ in
                        // Every worker has registered (its loops run) before the row appears.
                        let ok1 = try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.workers") == 3 }
                        #expect(ok1)
                        try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
                        let ok2 = try await eventually { try await channelRow(db, "match").status == "active" }
                        #expect(ok2)
                    }
                }
            }
            #expect(creates(mock) == 1)
            #expect(mock.channels().map(\.id) == [try await channelRow(db, "match").id].compactMap { $0 })
            #expect(mock.channels().first?.bundleID == Fixtures.topic && mock.channels().first?.storagePolicy == 1)
        }
    }

    /// a broadcast inserted with its channel waits for the create, then goes to /4/broadcasts/apps/<bundle>
    /// with apns-channel-id and ends sent; on a no-storage channel with apns-expiration 0 though it has an
    /// expires_at
    @Test("a broadcast waits for its channel's create, then goes to /4/broadcasts with apns-channel-id and ends sent")
    func broadcastWaitsForItsChannel() async throws {
        try await withChannels { mock, apnsURL, url, db in
            try await db.query("INSERT INTO pushq.channels (name, message_storage_policy) VALUES ('match', 0)")
            let id = try await db.query("SELECT pushq.broadcast('match', $1, priority => 5, expires_at => now() + interval '1 hour')",
                                        [Self.update]).string(0, 0) ?? ""
            try await withWorker(try configuration(url, mock, apnsURL)) { _ in
                let ok3 = try await eventually { try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'sent'") == 1 }
                #expect(ok3)
            }
            let channel = try #require(mock.channels().first)
            let broadcast = try #require(mock.requests().first { $0.path.hasPrefix("/4/broadcasts/") })
            #expect(broadcast.path == "/4/broadcasts/apps/\(Fixtures.topic)")
            #expect(broadcast.header("apns-channel-id") == channel.id && broadcast.header("apns-expiration") == "0")
            #expect(broadcast.header("apns-push-type") == "liveactivity" && broadcast.header("apns-priority") == "5")
            let create = try #require(mock.channelRequests().first)
            #expect(create.receivedMonotonicNanoseconds < broadcast.receivedMonotonicNanoseconds, "the broadcast waited for its channel")
            let row = try await db.query("SELECT last_status, channel FROM pushq.notifications WHERE id = $1", [Int64(id) ?? 0])
            #expect(row.string(0, 0) == "200" && row.string(0, 1) == "match")
        }
    }

    @Test("a channel deleted while broadcasts wait for it: they end failed/ChannelDeleted, and the channel is deleted at Apple")
    func deletedWhileRowsWait() async throws {
        try await withChannels { mock, apnsURL, url, db in
            try await withWorker(try configuration(url, mock, apnsURL)) { _ in
                try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
                let ok4 = try await eventually { try await channelRow(db, "match").status == "active" }
                #expect(ok4)
                #expect(mock.channels().count == 1)
                try await db.query("SELECT pushq.broadcast('match', $1, scheduled_at => now() + interval '1 hour') FROM generate_series(1, 3)",
                                   [Self.update])
                #expect(try await db.query("SELECT pushq.delete_channel('match')").string(0, 0) == "deleting")
                #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE status = 'failed' AND last_reason = 'ChannelDeleted'") == 3)
                let ok5 = try await eventually { try await channelRow(db, "match").status == "deleted" }
                #expect(ok5)
            }
            #expect(mock.channels().isEmpty)
            #expect(mock.channelRequests().contains { $0.method == "DELETE" })
            #expect(!mock.requests().contains { $0.path.hasPrefix("/4/broadcasts/") }, "no broadcast went out")
        }
    }

    @Test("a 500 from the management API is an outage: the create is tried again and succeeds, the attempt given back")
    func outageRetried() async throws {
        try await withChannels { mock, apnsURL, url, db in
            mock.failNextChannelRequest(with: .status(500, reason: "InternalServerError"))
            try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            try await withWorker(try configuration(url, mock, apnsURL)) { _ in
                let ok6 = try await eventually { try await channelRow(db, "match").status == "active" }
                #expect(ok6)
            }
            #expect(creates(mock) == 2)
            let row = try await db.query("SELECT last_status, last_reason, attempts FROM pushq.channels WHERE name = 'match'")
            #expect(row.isNull(0, 0) == false && row.string(0, 2) == "0")
        }
    }

    /// Apple refuses the channel for good (CannotCreateChannelConfig): failed with the reason, and its
    /// waiting broadcast ends ChannelFailed
    @Test("Apple refuses the channel for good: it fails with the reason, and its waiting broadcast ends ChannelFailed")
    func refused() async throws {
        try await withChannels { mock, apnsURL, url, db in
            mock.failNextChannelRequest(with: .status(400, reason: "CannotCreateChannelConfig"))
            try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            try await db.query("SELECT pushq.broadcast('match', $1)", [Self.update])
            try await withWorker(try configuration(url, mock, apnsURL)) { _ in
                let ok7 = try await eventually { try await channelRow(db, "match").status == "failed" }
                #expect(ok7)
            }
            let row = try await db.query("SELECT last_status, last_reason FROM pushq.channels")
            #expect(row.string(0, 0) == "400" && row.string(0, 1) == "CannotCreateChannelConfig")
            #expect(try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE last_reason = 'ChannelFailed'") == 1)
        }
    }

    @Test("the reconciliation lists the app's channels at Apple and records the one pushq.channels does not have")
    func reconciliation() async throws {
        try await withChannels { mock, apnsURL, url, db in
            let orphan = try #require(mock.createChannel(bundleID: Fixtures.topic, storagePolicy: 1))
            try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            try await withWorker(try configuration(url, mock, apnsURL)) { _ in
                let ok8 = try await eventually {
                    try await db.query("SELECT checked_at IS NOT NULL FROM pushq.channel_reconciliations").string(0, 0) == "t"
                }
                #expect(ok8)
            }
            let report = try #require(try await db.reconciliations().first)
            #expect(report.unknownIDs == [orphan.id] && report.listed == 2 && report.topic == Fixtures.topic && report.lastReason == nil)
            #expect(mock.channelRequests().contains { $0.path.hasSuffix("/all-channels") })
            let status = try await db.channelsStatus()
            #expect(status.channels.first?.status == "active" && status.reconciliations.first?.unknownIDs == [orphan.id])
        }
    }
}
