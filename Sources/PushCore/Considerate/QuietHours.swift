/// A time of day, in seconds since local midnight (0 ..< 86 400).
public struct TimeOfDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let seconds: Int

    /// `hour`:`minute`:`second`, nil when out of range (24:00 is not a time of day: write 00:00).
    public init?(hour: Int, minute: Int = 0, second: Int = 0) {
        guard (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) else { return nil }
        seconds = hour * 3600 + minute * 60 + second
    }

    init(seconds: Int) { self.seconds = seconds }

    public static func < (a: TimeOfDay, b: TimeOfDay) -> Bool { a.seconds < b.seconds }

    public var description: String {
        let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(h)):\(two(m))" + (s == 0 ? "" : ":\(two(s))")
    }
}

/// A lane's quiet hours: the local times `[start, end)` during which its rows are not sent (issue
/// 48, contract item 3). A window whose start is after its end wraps midnight: 21:00–08:00 holds
/// 21:00 to 23:59:59 and 00:00 to 07:59:59.
public struct QuietWindow: Sendable, Hashable, CustomStringConvertible {
    public let start: TimeOfDay
    public let end: TimeOfDay

    /// A window from `start` to `end`, nil when they are equal (a window must hold some time and
    /// leave some: `pushq.lanes` refuses equal bounds).
    public init?(start: TimeOfDay, end: TimeOfDay) {
        guard start != end else { return nil }
        self.start = start
        self.end = end
    }

    /// Whether the window wraps midnight.
    public var wraps: Bool { start > end }

    /// Whether local time `time` is inside `[start, end)`.
    public func contains(_ time: TimeOfDay) -> Bool {
        wraps ? (time >= start || time < end) : (time >= start && time < end)
    }

    public var description: String { "\(start)–\(end)" }
}

/// Whether an instant is inside a lane's quiet hours where the recipient is, and when they end.
public enum QuietVerdict: Sendable, Equatable {
    /// Outside the window: the row may be sent.
    case outside
    /// Inside: the row waits until `until` (seconds since 1970-01-01 UTC), the first instant at
    /// which the recipient's local time is outside the window again.
    case inside(until: Int64)
}

/// The quiet-hours rule (issue 48, contract item 3), pure: given an instant, the recipient's zone
/// and a window, whether the local time is inside it and when it next ends there. Local time is
/// the instant plus the zone's offset at that instant, so a clock change inside the window moves
/// its end: after a spring-forward the window ends an hour sooner in UTC; an end time that a
/// spring-forward skips (02:30 on a night that jumps from 02:00 to 03:00) ends the window at the
/// jump; after a fall-back it ends an hour later, and a window over the repeated hour is entered
/// again when the clock goes back into it.
public enum QuietHours {
    /// The verdict at `instant` for `window` in `zone`.
    public static func check(at instant: Int64, zone: ZoneRules, window: QuietWindow) -> QuietVerdict {
        var t = instant
        // Each pass covers one stretch of constant offset; a window is shorter than a day and zones
        // change offset at most a few times a year, so a handful of passes always suffice.
        for _ in 0..<8 {
            let offset = Int64(zone.offset(at: t))
            let local = t + offset
            if !window.contains(timeOfDay(local)) { return t == instant ? .outside : .inside(until: t) }
            let endLocal = nextLocal(window.end, atOrAfter: local)
            let end = endLocal - offset
            guard let change = zone.nextTransition(after: t), change <= end else { return .inside(until: end) }
            t = change
        }
        return .inside(until: t)
    }

    /// The local time of day of local seconds `local`.
    static func timeOfDay(_ local: Int64) -> TimeOfDay {
        TimeOfDay(seconds: Int(local - floorDiv(local, 86_400) * 86_400))
    }

    /// The first local instant at or after `local` whose time of day is `time`.
    static func nextLocal(_ time: TimeOfDay, atOrAfter local: Int64) -> Int64 {
        let candidate = floorDiv(local, 86_400) * 86_400 + Int64(time.seconds)
        return candidate >= local ? candidate : candidate + 86_400
    }
}
