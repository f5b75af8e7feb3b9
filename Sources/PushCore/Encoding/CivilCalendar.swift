/// Dates of the proleptic Gregorian calendar as days since 1970-01-01 and back (Howard
/// Hinnant's civil-calendar algorithms), for the hand-written timestamp readers (PostgreSQL's
/// text timestamps, HTTP dates) that must not go through Foundation's calendars on the hot path.
public enum CivilCalendar {
    /// Days since 1970-01-01 of `year`-`month`-`day` (month 1...12).
    @inlinable
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The (year, month 1...12, day) of a count of days since 1970-01-01.
    @inlinable
    public static func date(days z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
