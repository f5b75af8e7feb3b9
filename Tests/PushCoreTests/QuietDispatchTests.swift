import PushCore
import Testing

/// The worker's side of quiet hours (issue 48, item 3), pure: instants the server computed,
/// compared with the server's clock as the worker reads it from a claim. No clock inside: `now`
/// is passed in.
@Suite("Quiet hours at dispatch")
struct QuietDispatchTests {
    static let opens: Int64 = 1_800_000_000_000_000
    static let closes: Int64 = opens + 3_600_000_000
    static let window = QuietInstants(opens: opens, closes: closes)!

    @Test("before the window: send; inside [opens, closes): wait until closes; at closes and after: send")
    func dispatch() {
        #expect(QuietHours.dispatch(now: Self.opens - 1, window: Self.window) == .send)
        #expect(QuietHours.dispatch(now: Self.opens, window: Self.window) == .wait(until: Self.closes))
        #expect(QuietHours.dispatch(now: Self.closes - 1, window: Self.window) == .wait(until: Self.closes))
        #expect(QuietHours.dispatch(now: Self.closes, window: Self.window) == .send)
        #expect(QuietHours.dispatch(now: Self.opens, window: nil) == .send, "a lane without quiet hours")
    }

    @Test("a window needs both instants, opens before closes")
    func instants() {
        #expect(QuietInstants(opens: nil, closes: Self.closes) == nil)
        #expect(QuietInstants(opens: Self.opens, closes: nil) == nil)
        #expect(QuietInstants(opens: Self.closes, closes: Self.opens) == nil)
        #expect(QuietInstants(opens: Self.opens, closes: Self.opens) == nil)
    }

    // A claim at server instant S (lease S + 60 s) sent at monotonic M: the window opening 5 s after
    // S is monotonic M + 5 s, earlier than the true instant by the claim's latency, never later.
    @Test("the server's instants on the worker's monotonic clock, from the claim's lease; the start deadline is the earlier")
    func clock() {
        let server = Self.opens - 5_000_000
        let clock = QuietClock(lease: server + 60_000_000, leaseSeconds: 60, monotonic: 7_000_000_000)
        #expect(clock.serverMicros == server)
        #expect(clock.monotonic(atServer: Self.opens) == 12_000_000_000)
        #expect(clock.server(atMonotonic: 12_000_000_000) == Self.opens)
        #expect(QuietHours.startDeadline(sendBy: 20_000_000_000, window: Self.window, clock: clock) == 12_000_000_000)
        #expect(QuietHours.startDeadline(sendBy: 9_000_000_000, window: Self.window, clock: clock) == 9_000_000_000, "the send window ends first")
        #expect(QuietHours.startDeadline(sendBy: 20_000_000_000, window: nil, clock: clock) == 20_000_000_000)
    }
}
