/// How long a claim loop that found its queue drained waits before it claims again, when no
/// NOTIFY wakes it sooner: pure, so it is tested without a clock or a database.
///
/// Nothing NOTIFYs when a waiting entry of `pushq.due` becomes due (a scheduled row, a retry,
/// an entry held to its lane's quiet window's end or by a frequency cap): the loop used to find
/// it at its next poll. It now wakes shortly after the earliest entry due *strictly after* the
/// database's `now()` (the database gives the seconds until then: no clock is compared here),
/// and at the poll at the latest:
///
///     wait = min(poll, max(floor, seconds until the next entry + margin))
///
/// An entry already due that this worker cannot claim (another credential's, a paused lane's)
/// never counts, so it cannot make the loop wait 0 over and over. An entry in the future that
/// it cannot claim wakes it once, at its time, for one claim that takes nothing; the `floor`
/// keeps many such entries close together (another credential's retries, say) from waking it
/// more often than every ``shortest``, and doubles after each early wake whose claim took
/// nothing, up to the poll (the loop then waits as it did before), until a wait that ran out
/// is followed by a claim that takes rows. A wait a NOTIFY ended says nothing of the entries,
/// and leaves the floor as it is (its rows were the NOTIFY's: resetting the floor there let a
/// stream of entries this worker cannot take wake it every 10 ms between its own rows).
///
/// Every drained worker of a fleet reads the same next entry and wakes for it: the first to
/// claim takes it, the others take nothing (once per entry each, no more often than the floor).
public struct DrainedWait: Sendable, Hashable {
    /// The shortest early wait. Defaults to 10 ms.
    public let shortest: Duration
    /// Added to the seconds until the next entry, so that the claim's `now()` is past its due
    /// time. Defaults to 5 ms.
    public let margin: Duration
    /// The shortest early wait now: ``shortest``, doubled by each early wake that took nothing.
    public private(set) var floor: Duration
    /// Whether the last wait was cut short for an entry (an early wake).
    public private(set) var early = false
    /// Whether the last wait ran its whole length (``waited(signaled:)``), no NOTIFY ending it.
    public private(set) var ranOut = false

    public init(shortest: Duration = .milliseconds(10), margin: Duration = .milliseconds(5)) {
        precondition(shortest > .zero && margin >= .zero)
        self.shortest = shortest
        self.margin = margin
        floor = shortest
    }

    /// The wait of a drained claim loop.
    ///
    /// - Parameters:
    ///   - poll: the worker's poll (the longest wait).
    ///   - took: the rows the claims since the last wait took.
    ///   - secondsUntilNext: the seconds from the database's `now()` to the earliest entry of
    ///     `pushq.due` due after it; nil when there is none (or it could not be read).
    /// - Returns: how long to wait for a NOTIFY before claiming again.
    public mutating func next(poll: Duration, took: Int, secondsUntilNext: Double?) -> Duration {
        if ranOut {
            if took > 0 {
                floor = shortest
            } else if early {
                floor = min(floor * 2, poll)
            }
        }
        early = false
        ranOut = false
        guard let seconds = secondsUntilNext, seconds.isFinite else { return poll }
        let until = seconds <= 0 ? Duration.zero : (seconds >= Double(Int32.max) ? poll : Duration.seconds(seconds))
        let wait = max(floor, until + margin)
        guard wait < poll else { return poll }
        early = true
        return wait
    }

    /// How the wait ``next(poll:took:secondsUntilNext:)`` returned ended: `signaled`, by a
    /// NOTIFY (or a stop); else it ran out.
    public mutating func waited(signaled: Bool) {
        ranOut = !signaled
    }
}
