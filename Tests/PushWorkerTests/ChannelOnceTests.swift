import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Issue 45, item 8 and the channel part of item 9: each row of `pushq.channels` ends with exactly
/// one channel at Apple, however slow the management host, however many workers, and when a
/// create's answer is lost; an `apns_channel_id` that cannot be a header value never goes out.
@Suite("Broadcast channels created once")
struct ChannelOnceTests {
    func configuration(_ url: String, _ mock: MockPushServer, _ apnsURL: String, id: String) throws -> WorkerConfiguration {
        var c = try workerConfiguration(databaseURL: url, apnsURL: apnsURL, workerID: id)
        c.channelsBaseURL = mock.managementURL
        c.outageProbeBaseSeconds = 0.05
        c.outageProbeCapSeconds = 0.1
        return c
    }

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

    func creates(_ mock: MockPushServer) -> Int {
        mock.channelRequests().filter { $0.method == "POST" && $0.path.hasSuffix("/channels") }.count
    }

    func rowIDs(_ db: PGConnection) async throws -> Set<String> {
        let r = try await db.query("SELECT apns_channel_id FROM pushq.channels WHERE apns_channel_id IS NOT NULL")
        return Set((0..<r.count).compactMap { r.string($0, 0) })
    }

    // The management host answers each request 2 s after it arrives and the lease is 9 s: ten
    // channels claimed at once (the old claim of 10) and worked through one by one outlive it,
    // and the second worker, started once the first create reached the mock, takes the rest
    // again. No wall-clock bound is asserted: the test counts the creates the mock received and
    // compares Apple's channels with the rows' ids.
    @Test("two workers, a management host slower than a lease's share: 10 channels, exactly 10 creates, Apple's = the rows' ids")
    func slowHostTwoWorkers() async throws {
        try await withChannels { mock, apnsURL, url, db in
            mock.setChannelLatency(milliseconds: 2000)
            func slow(_ id: String) throws -> WorkerConfiguration {
                var c = try configuration(url, mock, apnsURL, id: id)
                c.leaseSeconds = 9
                c.sender.requestTimeout = 3.5
                c.sender.connectTimeout = 1
                return c
            }
            try await withWorker(try slow("w1")) { _ in
                try await db.query("INSERT INTO pushq.channels (name) SELECT 'match-' || g FROM generate_series(1, 10) g")
                let started = try await eventually { creates(mock) >= 1 }
                #expect(started)
                try await withWorker(try slow("w2")) { _ in
                    let active = try await eventually(timeout: .seconds(240)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.channels WHERE status = 'active'") == 10
                    }
                    #expect(active)
                }
            }
            #expect(creates(mock) == 10, "creates at the mock: \(creates(mock))")
            let atApple = Set(mock.channels(bundleID: Fixtures.topic).map(\.id))
            #expect(atApple == (try await rowIDs(db)), "Apple has \(atApple.count) channels for 10 rows")
        }
    }

    /// a create whose answer is lost after Apple created it: the worker lists Apple's channels and adopts it,
    /// never creates again
    @Test("a create whose answer was lost after Apple created it: the worker lists Apple's channels and adopts it, never recreates")
    func lostAnswerAdopted() async throws {
        try await withChannels { mock, apnsURL, url, db in
            mock.loseNextChannelCreateAnswer(.reset)
            try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            try await withWorker(try configuration(url, mock, apnsURL, id: "w1")) { _ in
                let active = try await eventually {
                    try await scalar(db, "SELECT count(*) FROM pushq.channels WHERE status = 'active'") == 1
                }
                #expect(active)
            }
            #expect(creates(mock) == 1)
            let atApple = mock.channels(bundleID: Fixtures.topic).map(\.id)
            #expect(atApple.count == 1)
            #expect(Set(atApple) == (try await rowIDs(db)))
            #expect(mock.channelRequests().contains { $0.path.hasSuffix("/all-channels") }, "the outcome was found by listing")
        }
    }

    @Test("a channel deleted while its lost create waits for its retry: the worker finds the channel Apple made and deletes it")
    func lostCreateThenDeleted() async throws {
        try await withChannels { mock, apnsURL, url, db in
            mock.loseNextChannelCreateAnswer(.reset)
            try await db.query("INSERT INTO pushq.channels (name) VALUES ('match')")
            var c = try configuration(url, mock, apnsURL, id: "w1")
            // The retry after the lost answer is an hour away: the deletion comes first.
            c.retryPolicy = RetryPolicy(baseSeconds: 3600, capSeconds: 3600, throttleDelaySeconds: 3600)
            c.outageProbeBaseSeconds = 3600
            c.outageProbeCapSeconds = 3600
            try await withWorker(c) { _ in
                let waiting = try await eventually {
                    try await scalar(db, "SELECT count(*) FROM pushq.channels WHERE last_reason IS NOT NULL AND locked_by IS NULL") == 1
                }
                #expect(waiting)
                #expect(mock.channels().count == 1, "Apple created it")
                #expect(try await db.query("SELECT pushq.delete_channel('match')").string(0, 0) == "deleting")
                let deleted = try await eventually {
                    try await scalar(db, "SELECT count(*) FROM pushq.channels WHERE status = 'deleted'") == 1
                }
                #expect(deleted)
            }
            #expect(mock.channels().isEmpty)
            #expect(creates(mock) == 1)
        }
    }

    static let injected = "a\r\nx-evil: 1"

    /// an apns_channel_id with CR/LF: refused by the table; one stored anyway is never sent, the channel ends
    /// failed/BadChannelId
    @Test("an apns_channel_id with CR/LF is refused by the table; one stored anyway is never sent, the channel ends BadChannelId")
    func channelIDWithLineBreak() async throws {
        try await withChannels { mock, apnsURL, url, db in
            await #expect(throws: PGError.self) {
                try await db.query("INSERT INTO pushq.channels (name, status, apns_channel_id) VALUES ('x', 'deleting', $1)", [Self.injected])
            }
            // A row stored before the check existed (or with it dropped): the worker checks too.
            for constraint in ["channels_apns_channel_id_shape"] {
                try await db.query("ALTER TABLE pushq.channels DROP CONSTRAINT IF EXISTS \(constraint)")
            }
            try await db.query("DELETE FROM pushq.channels")
            try await db.query("INSERT INTO pushq.channels (name, status, apns_channel_id) VALUES ('x', 'deleting', $1)", [Self.injected])
            try await withWorker(try configuration(url, mock, apnsURL, id: "w1")) { _ in
                let ended = try await eventually {
                    try await scalar(db, "SELECT count(*) FROM pushq.channels WHERE status IN ('failed', 'deleted')") == 1
                }
                #expect(ended)
            }
            let row = try await db.query("SELECT status, last_reason FROM pushq.channels WHERE name = 'x'")
            #expect(row.string(0, 0) == "failed" && row.string(0, 1) == "BadChannelId")
            #expect(!mock.channelRequests().contains { $0.method == "DELETE" }, "no delete went out")
            #expect(!mock.channelRequests().contains { $0.header("x-evil") != nil })
        }
    }
}
