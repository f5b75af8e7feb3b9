import Foundation
import PushCore
@testable import PushTransport
import Testing

/// Send-time expiry follows the database's clock (which wrote `expires_at`), not the host's.
@Suite struct SenderClockTests {
    /// Sends `requests` through a sender whose database clock is `offset` seconds ahead of the host's.
    func send(_ requests: [PushRequest], databaseOffset offset: Int64) async throws -> [Int64: PushResponse] {
        let mock = try await MockHarness.start()
        let collector = ResultCollector()
        let configuration = mock.senderConfiguration().with { $0.databaseClock = DatabaseClockOffset(seconds: offset) }
        let sender = try PushSender(configuration: configuration, apns: mock.apns(), credential: .token(tokenManager()),
                                    logger: testLogger, onResults: collector.onResults)
        try sender.start()
        try sender.submit(requests)
        await collector.wait(for: requests.count)
        _ = await sender.shutdown(deadline: .seconds(5))
        try await mock.stop()
        return Dictionary(uniqueKeysWithValues: collector.responses.map { ($0.tag, $0) })
    }

    /// a host clock 1 h ahead of the database: a row whose expires_at is a minute ago by the host but in the
    /// future by the database is sent; one past by the database too is not
    @Test("a host clock 1 h ahead of the database: rows are expired by the database's clock, not the host's")
    func hostAhead() async throws {
        let host = Int64(time(nil))
        let out = try await send([request(1, expiration: host - 60), request(2, expiration: host - 7200)], databaseOffset: -3600)
        #expect(out[1]?.status == 200 && out[1]?.outcome == .sent)
        #expect(out[2]?.outcome == .expiredBeforeSending && out[2]?.status == nil)
    }

    @Test("a host clock 1 h behind the database: a row past by the database's clock is not sent late")
    func hostBehind() async throws {
        let host = Int64(time(nil))
        let out = try await send([request(1, expiration: host + 60), request(2, expiration: host + 7200)], databaseOffset: 3600)
        #expect(out[1]?.outcome == .expiredBeforeSending)
        #expect(out[2]?.status == 200)
    }

    @Test("without an offset the host's clock decides, as before")
    func noOffset() async throws {
        let host = Int64(time(nil))
        let out = try await send([request(1, expiration: host - 60), request(2, expiration: host + 3600)], databaseOffset: 0)
        #expect(out[1]?.outcome == .expiredBeforeSending)
        #expect(out[2]?.status == 200)
    }
}
