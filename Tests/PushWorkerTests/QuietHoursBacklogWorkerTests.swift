import Foundation
import MockPush
import PushCore
import PushStore
import PushTestSupport
import PushWorker
import Testing
import PGClient

/// Quiet hours per lane (issue 48, item 3): a backlog inside its window must not keep a quiet
/// lane's other zones' rows waiting for the worker's poll.
@Suite("Quiet hours: a backlog inside the window in the worker")
struct QuietHoursBacklogWorkerTests {
    /// The review's s10: 3 000 UTC rows inside their window ahead of 10 Tokyo rows outside theirs (a
    /// window around now in UTC is 9 hours off in Tokyo), all inserted before the worker starts. A
    /// claim of 100 moves 500 entries and takes nothing; the worker must claim again at once, not
    /// after its poll. The poll is 600 s and the test waits at most 120 s for the Tokyo rows: they
    /// are sent only if the loop claimed again without waiting for it (by structure, not by speed:
    /// a slow machine makes the claims slower, never fewer), and no UTC row reaches the mock.
    @Test("a backlog inside the window: the worker claims again at once and sends other zones' rows before its poll")
    func otherZonesGoBeforePoll() async throws {
        try await TestDatabase.with { url in
            let db = try await PGConnection.connect(url, logger: TestDatabase.logger)
            try await db.query("""
                INSERT INTO pushq.lanes (name, quiet_start, quiet_end, time_zone)
                VALUES ('quiet', ((now() AT TIME ZONE 'UTC') - interval '1 hour')::time, ((now() AT TIME ZONE 'UTC') + interval '1 hour')::time, 'UTC')
                """)
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, scheduled_at)
                SELECT lpad(to_hex(g), 64, '0'), '{}', 'quiet', now() - interval '1 hour' + g * interval '1 millisecond'
                  FROM generate_series(1, 3000) g
                """)
            try await db.query("""
                INSERT INTO pushq.notifications (device_token, payload, lane, time_zone)
                SELECT lpad(to_hex(g), 64, 'f'), '{}', 'quiet', 'Asia/Tokyo' FROM generate_series(1, 10) g
                """)
            try await withMock { server, apnsURL in
                var configuration = try workerConfiguration(databaseURL: url, apnsURL: apnsURL)
                configuration.pollSeconds = 600
                configuration.claimBatchSize = 100
                configuration.withoutProbes()
                try await withWorker(configuration) { _ in
                    let sent = try await eventually(timeout: .seconds(120)) {
                        try await scalar(db, "SELECT count(*) FROM pushq.notifications WHERE time_zone = 'Asia/Tokyo' AND status = 'sent'") == 10
                    }
                    #expect(sent, "the Tokyo rows waited behind the backlog")
                    #expect(server.requests().count == 10)
                    let held = try await scalar(db, "SELECT count(*) FROM pushq.due WHERE held = 'quiet' AND due_at > now()")
                    #expect(held == 3000)
                }
            }
            await db.close()
        }
    }
}
