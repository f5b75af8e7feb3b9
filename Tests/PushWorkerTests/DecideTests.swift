import MockPush
import PushCore
import PushStore
@testable import PushTransport
@testable import PushWorker
import Testing

/// The complete loop's pure step: answers → row updates, invalidations, pauses.
@Suite("Deciding a batch of answers")
struct DecideTests {
    func worker() throws -> PushWorker {
        PushWorker(configuration: try workerConfiguration(databaseURL: "unused", apnsURL: "https://127.0.0.1:1"), logger: quietLogger)
    }

    func answer(_ tag: Int64, token: String, status: Int, reason: APNsReason? = nil, timestamp: Int64? = nil) -> PushResponse {
        let headers = APNsHeaders(pushType: .alert, topic: Fixtures.topic, priority: 10, apnsID: "00000000-0000-4000-8000-000000000000")
        let request = PushRequest(tag: tag, deviceToken: token, payload: [], fields: .apns(headers))
        return PushResponse(request: request, status: status, answer: .apns(APNsAnswer(reason: reason, timestamp: timestamp)))
    }

    @Test("an invalidation names its own row's token even when an earlier answer's row is no longer held")
    func invalidationTokenFollowsItsRow() throws {
        let key = Endpoint(credential: "default", environment: .production)
        let gone = Fixtures.token(2, prefix: "9")
        let held: [PushWorker.Held?] = [
            nil,  // released meanwhile: nothing to write
            PushWorker.Held(attempt: 1, lease: 0, maxAttempts: 10, endpoint: key, deviceToken: Fixtures.token(1, prefix: "9"), lastReason: nil),
            PushWorker.Held(attempt: 1, lease: 0, maxAttempts: 10, endpoint: key, deviceToken: gone, lastReason: nil),
        ]
        let answers = [answer(1, token: "x", status: 200), answer(2, token: "y", status: 200),
                       answer(3, token: "z", status: 410, reason: .unregistered, timestamp: 1_700_000_000_000)]
        var decider = Decider(policy: RetryPolicy())
        let batch = try worker().decide(answers, held: held, decider: &decider)
        #expect(batch.completions.map(\.id) == [2, 3])
        #expect(batch.invalidations == [TokenInvalidation(deviceToken: gone, environment: .production, reason: "Unregistered",
                                                          atMilliseconds: 1_700_000_000_000)])
        #expect(batch.sent == 1 && batch.failed == 1)
        #expect(batch.resumed.count == 1)
    }

    func failure(_ tag: Int64, _ kind: TransportFailure.Kind, _ message: String) -> PushResponse {
        var response = answer(tag, token: "x", status: 0)
        response.status = nil
        response.transportFailure = TransportFailure(kind: kind, message: message)
        return response
    }

    @Test("a request refused locally as InvalidHeader ends its row failed, counted, with no hold")
    func invalidHeaderEndsTheRowFailed() throws {
        let key = Endpoint(credential: "default", environment: .production)
        let held: [PushWorker.Held?] = [PushWorker.Held(attempt: 1, lease: 0, maxAttempts: 10, endpoint: key, deviceToken: Fixtures.token(1), lastReason: nil)]
        var decider = Decider(policy: RetryPolicy())
        let batch = try worker().decide([failure(1, .invalidHeader, "apns-topic holds a control character")], held: held, decider: &decider)
        #expect(batch.completions.map(\.disposition) == [Disposition(status: .failed, reason: "InvalidHeader")])
        #expect(batch.failed == 1 && batch.retried == 0)
        #expect(batch.holds.isEmpty)
    }

    @Test("a provider token that cannot be signed pauses the credential; its row waits with its attempt back")
    func signingFailurePausesTheCredential() throws {
        let key = Endpoint(credential: "default", environment: .production)
        let held: [PushWorker.Held?] = [PushWorker.Held(attempt: 3, lease: 0, maxAttempts: 3, endpoint: key, deviceToken: Fixtures.token(1), lastReason: nil)]
        var decider = Decider(policy: RetryPolicy())
        let batch = try worker().decide([failure(1, .signingFailed, "cannot sign a provider token")], held: held, decider: &decider)
        #expect(batch.completions.first?.disposition.status == .retrying)
        #expect(batch.completions.first?.disposition.refundsAttempt == true)
        #expect(batch.holds.map(\.hold.kind) == [.credential])
        #expect(batch.holds.first?.hold.reason == "ProviderTokenSigningFailed")
    }
}
