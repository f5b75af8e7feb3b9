/// A POSIX TZ rule as a TZif footer carries it (RFC 8536 §3.3): `CET-1CEST,M3.5.0,M10.5.0/3`,
/// `<+0530>-5:30`, `<+1030>-10:30<+11>-11,M10.1.0,M4.1.0`. It gives the offset for every
/// instant after the file's last transition (years after 2037 in a "fat" file, most years in a
/// "slim" one).
public struct PosixZoneRule: Sendable, Equatable {
    /// Standard time's offset, seconds east of UTC (the TZ string's sign is the other way round).
    public var standardOffset: Int32
    /// Daylight saving time: its offset and when it starts and ends each year; nil when the zone
    /// keeps standard time all year.
    public var daylight: Daylight?

    public struct Daylight: Sendable, Equatable {
        public var offset: Int32
        /// When daylight time starts, in standard local time.
        public var start: Moment
        /// When it ends, in daylight local time.
        public var end: Moment
    }

    /// A day of the year and a local time of that day (seconds; may be negative or past 24 h).
    public struct Moment: Sendable, Equatable {
        public enum Day: Sendable, Equatable {
            /// `Jn`: day 1–365, February 29 never counted.
            case julian(Int)
            /// `n`: day 0–365, February 29 counted.
            case zeroBased(Int)
            /// `Mm.w.d`: weekday `d` (0 Sunday) of week `w` (1–4, 5: the last) of month `m`.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }
        public var day: Day
        public var time: Int
    }

    /// Reads `text`.
    ///
    /// - Throws: ``ZoneRulesError`` naming the rule.
    public init(_ text: String) throws(ZoneRulesError) {
        var p = Parser(text: Array(text.utf8))
        guard let std = p.offsetAfterName() else { throw ZoneRulesError("cannot read the TZ rule \(text)") }
        standardOffset = Int32(-std)
        if p.atEnd { daylight = nil; return }
        guard p.name() else { throw ZoneRulesError("cannot read the TZ rule \(text)") }
        var dst = -std + 3600
        if !p.atEnd, p.peek != UInt8(ascii: ",") {
            guard let o = p.signedTime() else { throw ZoneRulesError("cannot read the TZ rule \(text)") }
            dst = -o
        }
        guard p.eat(","), let start = p.moment(), p.eat(","), let end = p.moment(), p.atEnd else {
            throw ZoneRulesError("cannot read the start and end of daylight time in the TZ rule \(text)")
        }
        daylight = Daylight(offset: Int32(dst), start: start, end: end)
    }

    /// The offset in force at `instant`.
    public func offset(at instant: Int64) -> Int32 {
        guard let daylight else { return standardOffset }
        let year = CivilCalendar.date(days: Int(floorDiv(instant + Int64(standardOffset), 86_400))).year
        let (start, end) = transitions(in: year, daylight)
        let inDaylight = start < end ? (instant >= start && instant < end) : !(instant >= end && instant < start)
        return inDaylight ? daylight.offset : standardOffset
    }

    /// The first change of offset after `instant`, nil without daylight time.
    public func nextTransition(after instant: Int64) -> Int64? {
        guard let daylight else { return nil }
        let year = CivilCalendar.date(days: Int(floorDiv(instant + Int64(standardOffset), 86_400))).year
        var best: Int64?
        for y in (year - 1)...(year + 1) {
            let (start, end) = transitions(in: y, daylight)
            for t in [start, end] where t > instant && (best == nil || t < best!) { best = t }
        }
        return best
    }

    /// The instants daylight time starts and ends in `year`.
    func transitions(in year: Int, _ daylight: Daylight) -> (start: Int64, end: Int64) {
        let start = Self.local(daylight.start, year) - Int64(standardOffset)
        let end = Self.local(daylight.end, year) - Int64(daylight.offset)
        return (start, end)
    }

    /// `moment` of `year` as local seconds since 1970-01-01.
    static func local(_ moment: Moment, _ year: Int) -> Int64 {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let january1 = CivilCalendar.days(year: year, month: 1, day: 1)
        let day: Int
        switch moment.day {
        case .julian(let n):
            day = january1 + n - 1 + (leap && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            day = january1 + n
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilCalendar.days(year: year, month: month, day: 1)
            let firstWeekday = ((first + 4) % 7 + 7) % 7  // 1970-01-01 was a Thursday
            var d = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let nextMonth = month == 12 ? CivilCalendar.days(year: year + 1, month: 1, day: 1) : CivilCalendar.days(year: year, month: month + 1, day: 1)
            while d >= nextMonth { d -= 7 }
            day = d
        }
        return Int64(day) * 86_400 + Int64(moment.time)
    }

    /// The characters of a TZ rule, read left to right.
    struct Parser {
        let text: [UInt8]
        var at = 0

        var atEnd: Bool { at >= text.count }
        var peek: UInt8? { atEnd ? nil : text[at] }

        mutating func eat(_ c: Character) -> Bool {
            guard peek == c.asciiValue else { return false }
            at += 1
            return true
        }

        /// A zone's name: three or more letters, or anything between `<` and `>`.
        mutating func name() -> Bool {
            if eat("<") {
                while let c = peek, c != UInt8(ascii: ">") { at += 1 }
                return eat(">")
            }
            let start = at
            while let c = peek, (65...90).contains(c) || (97...122).contains(c) { at += 1 }
            return at - start >= 3
        }

        /// A name and the offset after it (as written: positive west of Greenwich).
        mutating func offsetAfterName() -> Int? {
            guard name() else { return nil }
            return signedTime()
        }

        /// `[+-]hh[:mm[:ss]]`, hours up to 167.
        mutating func signedTime() -> Int? {
            var sign = 1
            if eat("-") { sign = -1 } else { _ = eat("+") }
            guard let h = number(), h <= 167 else { return nil }
            var seconds = h * 3600
            if eat(":") {
                guard let m = number(), m < 60 else { return nil }
                seconds += m * 60
                if eat(":") {
                    guard let s = number(), s < 60 else { return nil }
                    seconds += s
                }
            }
            return sign * seconds
        }

        mutating func number() -> Int? {
            let start = at
            var n = 0
            while let c = peek, (48...57).contains(c), at - start < 4 {
                n = n * 10 + Int(c - 48)
                at += 1
            }
            return at == start ? nil : n
        }

        /// `date[/time]`, the time 02:00 when left out.
        mutating func moment() -> Moment? {
            let day: Moment.Day
            if eat("J") {
                guard let n = number(), (1...365).contains(n) else { return nil }
                day = .julian(n)
            } else if eat("M") {
                guard let m = number(), (1...12).contains(m), eat("."), let w = number(), (1...5).contains(w), eat("."),
                      let d = number(), (0...6).contains(d) else { return nil }
                day = .monthWeekDay(month: m, week: w, weekday: d)
            } else {
                guard let n = number(), (0...365).contains(n) else { return nil }
                day = .zeroBased(n)
            }
            var time = 7200
            if eat("/") {
                guard let t = signedTime() else { return nil }
                time = t
            }
            return Moment(day: day, time: time)
        }
    }
}

/// `a / b` rounded down (toward minus infinity), `b` > 0.
@inlinable
func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? a / b : -((-a + b - 1) / b)
}
