/// What a connection's thread does when libcurl fails to drive its transfers
/// (`curl_multi_perform` or `curl_multi_poll` returns an error): pure, so it is tested without
/// breaking libcurl.
///
/// A failure that repeats on every turn must neither spin the thread nor log on every turn:
/// - the first failure of a run is logged; the others are counted, and the recovery is logged
///   with their number (``succeeded()``);
/// - the thread rests between failed turns, ``firstRestMilliseconds`` doubling up to
///   ``maximumRestMilliseconds``;
/// - the connection is replaced (a new multi handle) once nothing is in flight, and after
///   ``abandonAfter`` failures in a row the transfers in flight are given up (outcome unknown,
///   retried by the caller) so that it can be.
public struct LoopBackoff: Sendable, Hashable {
    /// Failures in a row so far.
    public private(set) var failures = 0
    /// Failures in a row after which transfers in flight are given up. Defaults to 3.
    public let abandonAfter: Int
    /// The rest after the first failure, in milliseconds. Defaults to 10.
    public let firstRestMilliseconds: Int
    /// The longest rest, in milliseconds. Defaults to 1000.
    public let maximumRestMilliseconds: Int

    public init(abandonAfter: Int = 3, firstRestMilliseconds: Int = 10, maximumRestMilliseconds: Int = 1000) {
        precondition(abandonAfter >= 1 && firstRestMilliseconds >= 1 && maximumRestMilliseconds >= firstRestMilliseconds)
        self.abandonAfter = abandonAfter
        self.firstRestMilliseconds = firstRestMilliseconds
        self.maximumRestMilliseconds = maximumRestMilliseconds
    }

    /// What to do after a failed turn.
    public struct Step: Sendable, Hashable {
        /// Log this failure (the first of a run).
        public var log: Bool
        /// Rest this long before the next turn, in milliseconds.
        public var restMilliseconds: Int
        /// Give up the transfers in flight, so that the connection can be replaced now.
        public var abandonInFlight: Bool

        init(log: Bool, restMilliseconds: Int, abandonInFlight: Bool) {
            self.log = log
            self.restMilliseconds = restMilliseconds
            self.abandonInFlight = abandonInFlight
        }
    }

    /// Records a failed turn and says what to do.
    public mutating func failed() -> Step {
        failures += 1
        let doublings = min(failures - 1, 30)
        let rest = min(maximumRestMilliseconds, firstRestMilliseconds << doublings)
        return Step(log: failures == 1, restMilliseconds: rest, abandonInFlight: failures >= abandonAfter)
    }

    /// Records a turn that worked; returns how many failures in a row it ends (0: none, nothing to log).
    public mutating func succeeded() -> Int {
        defer { failures = 0 }
        return failures
    }
}
