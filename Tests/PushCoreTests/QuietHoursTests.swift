import Foundation
import PushCore
import Testing

/// The quiet-hours rule (issue 48, item 3), pure: given an instant, a zone and a window, inside or
/// not and when the window next ends locally. Zones come from the system's tzdata
/// (/usr/share/zoneinfo, what PostgreSQL reads too: `TimeZoneTests` checks that both agree).
@Suite("Quiet hours")
struct QuietHoursTests {
    static func zone(_ name: String) throws -> ZoneRules {
        let path = "/usr/share/zoneinfo/" + name
        guard let data = FileManager.default.contents(atPath: path) else { throw ZoneRulesError("cannot read \(path)") }
        return try ZoneRules(tzif: Array(data))
    }

    /// `y-mo-d h:mi:s` UTC as seconds since 1970-01-01.
    static func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0, _ s: Int = 0) -> Int64 {
        Int64(CivilCalendar.days(year: y, month: mo, day: d)) * 86_400 + Int64(h * 3600 + mi * 60 + s)
    }

    static func window(_ start: (Int, Int), _ end: (Int, Int)) -> QuietWindow {
        QuietWindow(start: TimeOfDay(hour: start.0, minute: start.1)!, end: TimeOfDay(hour: end.0, minute: end.1)!)!
    }

    static let night = window((21, 0), (8, 0))

    @Test("a window holds [start, end); one that wraps midnight holds both ends of the day; equal bounds are no window")
    func windowBounds() {
        let t = { (h: Int, m: Int, s: Int) in TimeOfDay(hour: h, minute: m, second: s)! }
        #expect(Self.night.wraps)
        for inside in [t(21, 0, 0), t(23, 59, 59), t(0, 0, 0), t(7, 59, 59)] { #expect(Self.night.contains(inside), "\(inside)") }
        for outside in [t(8, 0, 0), t(12, 0, 0), t(20, 59, 59)] { #expect(!Self.night.contains(outside), "\(outside)") }
        let lunch = Self.window((13, 0), (14, 0))
        #expect(!lunch.wraps && lunch.contains(t(13, 0, 0)) && lunch.contains(t(13, 59, 59)))
        #expect(!lunch.contains(t(14, 0, 0)) && !lunch.contains(t(12, 59, 59)))
        #expect(QuietWindow(start: t(9, 0, 0), end: t(9, 0, 0)) == nil)
        #expect(TimeOfDay(hour: 24) == nil && TimeOfDay(hour: 23, minute: 60) == nil)
    }

    @Test("UTC: inside from 21:00 until 08:00 the next morning, outside from 08:00")
    func utcWindow() {
        #expect(QuietHours.check(at: Self.utc(2026, 12, 1, 22), zone: .utc, window: Self.night) == .inside(until: Self.utc(2026, 12, 2, 8)))
        #expect(QuietHours.check(at: Self.utc(2026, 12, 2, 7, 59, 59), zone: .utc, window: Self.night) == .inside(until: Self.utc(2026, 12, 2, 8)))
        #expect(QuietHours.check(at: Self.utc(2026, 12, 2, 8), zone: .utc, window: Self.night) == .outside)
        #expect(QuietHours.check(at: Self.utc(2026, 12, 2, 20, 59, 59), zone: .utc, window: Self.night) == .outside)
    }

    // 16:00Z is 21:30 in India (+05:30); 08:00 there is 02:30Z.
    @Test("a half-hour zone (Asia/Kolkata, +05:30): the window follows local time to the half hour")
    func halfHourZone() throws {
        let kolkata = try Self.zone("Asia/Kolkata")
        #expect(kolkata.offset(at: Self.utc(2026, 12, 1, 0)) == 19_800)
        #expect(QuietHours.check(at: Self.utc(2026, 12, 1, 16), zone: kolkata, window: Self.night) == .inside(until: Self.utc(2026, 12, 2, 2, 30)))
        #expect(QuietHours.check(at: Self.utc(2026, 12, 1, 15, 29, 59), zone: kolkata, window: Self.night) == .outside)
        #expect(QuietHours.check(at: Self.utc(2026, 12, 1, 15, 30), zone: kolkata, window: Self.night) == .inside(until: Self.utc(2026, 12, 2, 2, 30)))
        #expect(QuietHours.check(at: Self.utc(2026, 12, 2, 2, 30), zone: kolkata, window: Self.night) == .outside)
    }

    // 08:00Z on December 1 is 22:00 on December 1 in Kiritimati (+14) and 21:00 on November 30 in
    // Pago Pago (-11): the same instant, a day apart, each inside until 08:00 of its own next day.
    @Test("a +14 h zone (Pacific/Kiritimati) and a -11 h one: local dates a day apart, each window ends on its own morning")
    func dateLine() throws {
        let kiritimati = try Self.zone("Pacific/Kiritimati"), pagoPago = try Self.zone("Pacific/Pago_Pago")
        #expect(kiritimati.offset(at: Self.utc(2026, 12, 1, 8)) == 14 * 3600)
        let at = Self.utc(2026, 12, 1, 8)
        #expect(QuietHours.check(at: at, zone: kiritimati, window: Self.night) == .inside(until: Self.utc(2026, 12, 1, 18)))
        #expect(QuietHours.check(at: at, zone: pagoPago, window: Self.night) == .inside(until: Self.utc(2026, 12, 1, 19)))
        #expect(QuietHours.check(at: Self.utc(2026, 12, 1, 18), zone: kiritimati, window: Self.night) == .outside)
    }

    // Berlin, 2026-03-29 01:00Z: 02:00 CET becomes 03:00 CEST. 08:00 CEST is 06:00Z, not 07:00Z.
    @Test("spring forward (Europe/Berlin): the night ends at 08:00 summer time, an hour sooner in UTC")
    func springForward() throws {
        let berlin = try Self.zone("Europe/Berlin")
        #expect(QuietHours.check(at: Self.utc(2026, 3, 28, 21), zone: berlin, window: Self.night) == .inside(until: Self.utc(2026, 3, 29, 6)))
        #expect(QuietHours.check(at: Self.utc(2026, 3, 29, 6), zone: berlin, window: Self.night) == .outside)
    }

    // 02:30 does not exist in Berlin on 2026-03-29: at 01:00Z the clock reads 03:00, outside 22:00–02:30.
    @Test("spring forward skipping the window's end (22:00–02:30 in Berlin): the window ends at the jump")
    func springForwardSkippedEnd() throws {
        let berlin = try Self.zone("Europe/Berlin")
        let window = Self.window((22, 0), (2, 30))
        #expect(QuietHours.check(at: Self.utc(2026, 3, 29, 0, 30), zone: berlin, window: window) == .inside(until: Self.utc(2026, 3, 29, 1)))
        #expect(QuietHours.check(at: Self.utc(2026, 3, 29, 1), zone: berlin, window: window) == .outside)
    }

    // Berlin, 2026-10-25 01:00Z: 03:00 CEST becomes 02:00 CET. 08:00 CET is 07:00Z, not 06:00Z.
    @Test("fall back (Europe/Berlin): the night ends at 08:00 winter time, an hour later in UTC")
    func fallBack() throws {
        let berlin = try Self.zone("Europe/Berlin")
        #expect(QuietHours.check(at: Self.utc(2026, 10, 24, 20), zone: berlin, window: Self.night) == .inside(until: Self.utc(2026, 10, 25, 7)))
        #expect(QuietHours.check(at: Self.utc(2026, 10, 25, 6, 30), zone: berlin, window: Self.night) == .inside(until: Self.utc(2026, 10, 25, 7)))
    }

    // 01:00–02:30 in Berlin on 2026-10-25: 01:30 CEST (23:30Z) inside until 02:30 CEST (00:30Z);
    // 02:45 CEST (00:45Z) outside; at 01:00Z the clock goes back to 02:00 CET, inside again until 01:30Z.
    @Test("fall back over the window (01:00–02:30 in Berlin): left at 02:30 summer time, entered again when the clock goes back")
    func fallBackRepeatedHour() throws {
        let berlin = try Self.zone("Europe/Berlin")
        let window = Self.window((1, 0), (2, 30))
        #expect(QuietHours.check(at: Self.utc(2026, 10, 24, 23, 30), zone: berlin, window: window) == .inside(until: Self.utc(2026, 10, 25, 0, 30)))
        #expect(QuietHours.check(at: Self.utc(2026, 10, 25, 0, 45), zone: berlin, window: window) == .outside)
        #expect(QuietHours.check(at: Self.utc(2026, 10, 25, 1, 0), zone: berlin, window: window) == .inside(until: Self.utc(2026, 10, 25, 1, 30)))
    }

    // New York: 2026-03-08 07:00Z (02:00 EST → 03:00 EDT) and 2026-11-01 06:00Z (02:00 EDT → 01:00 EST).
    @Test("both changes west of Greenwich (America/New_York): 08:00 EDT is 12:00Z, 08:00 EST is 13:00Z")
    func newYork() throws {
        let newYork = try Self.zone("America/New_York")
        #expect(QuietHours.check(at: Self.utc(2026, 3, 8, 2), zone: newYork, window: Self.night) == .inside(until: Self.utc(2026, 3, 8, 12)))
        #expect(QuietHours.check(at: Self.utc(2026, 11, 1, 1), zone: newYork, window: Self.night) == .inside(until: Self.utc(2026, 11, 1, 13)))
    }

    // Lord Howe Island moves its clock by half an hour: +11 until 2026-04-05 02:00 local (15:00Z
    // on April 4), then +10:30. 21:00 +11 is 10:00Z; 08:00 +10:30 is 21:30Z.
    @Test("a half-hour clock change (Australia/Lord_Howe): the window ends at 08:00 +10:30")
    func halfHourChange() throws {
        let lordHowe = try Self.zone("Australia/Lord_Howe")
        #expect(lordHowe.offset(at: Self.utc(2026, 4, 4, 14, 59)) == 11 * 3600 && lordHowe.offset(at: Self.utc(2026, 4, 4, 15)) == 37_800)
        #expect(QuietHours.check(at: Self.utc(2026, 4, 4, 10), zone: lordHowe, window: Self.night) == .inside(until: Self.utc(2026, 4, 4, 21, 30)))
    }

    // Past the file's last transition (2037 in a "fat" file) the footer's rule decides: Berlin's
    // last Sunday of March 2040 is the 25th.
    @Test("after the file's transitions the footer's rule decides (Berlin, 2040) and agrees with the transitions before")
    func footerRule() throws {
        let berlin = try Self.zone("Europe/Berlin")
        #expect(berlin.rule == (try PosixZoneRule("CET-1CEST,M3.5.0,M10.5.0/3")))
        #expect(QuietHours.check(at: Self.utc(2040, 3, 24, 21), zone: berlin, window: Self.night) == .inside(until: Self.utc(2040, 3, 25, 6)))
        let rule = try PosixZoneRule("CET-1CEST,M3.5.0,M10.5.0/3")
        for day in stride(from: Self.utc(2026, 1, 1, 0), to: Self.utc(2037, 1, 1, 0), by: 86_400 * 3 + 3_600) {
            #expect(rule.offset(at: day) == berlin.offset(at: day), "\(day)")
        }
        #expect(rule.nextTransition(after: Self.utc(2026, 6, 1, 0)) == Self.utc(2026, 10, 25, 1))
        let lordHowe = try PosixZoneRule("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0")
        #expect(lordHowe.offset(at: Self.utc(2041, 1, 1, 0)) == 11 * 3600 && lordHowe.offset(at: Self.utc(2041, 6, 1, 0)) == 37_800)
        #expect(try PosixZoneRule("<+0530>-5:30").offset(at: 0) == 19_800)
        #expect(try PosixZoneRule("EST5EDT,M3.2.0,M11.1.0").offset(at: Self.utc(2050, 7, 1, 0)) == -4 * 3600)
    }

    @Test("malformed zone data is refused with a reason, never read as UTC")
    func malformed() {
        #expect(throws: ZoneRulesError.self) { try ZoneRules(tzif: Array("TZif2".utf8)) }
        #expect(throws: ZoneRulesError.self) { try ZoneRules(tzif: Array("not a zone file at all, not even close to one".utf8)) }
        #expect(throws: ZoneRulesError.self) { try PosixZoneRule("CET-1CEST,M13.5.0,M10.5.0") }
        #expect(throws: ZoneRulesError.self) { try PosixZoneRule("") }
    }
}
