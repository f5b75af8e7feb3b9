import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Conversion between `Date` and PostgreSQL's ISO `timestamptz` text.
///
/// Connections set `TimeZone` to UTC and `DateStyle` to ISO, so the server sends
/// `2026-11-22 07:26:10.35422+00`; other offsets are still honoured.
enum PGTimestamp {
    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]]`, `infinity` and `-infinity`.
    static func parse(_ text: String) -> Date? {
        if text == "infinity" { return .distantFuture }
        if text == "-infinity" { return .distantPast }
        var bytes = Array(text.utf8)[...]
        func number(_ maxDigits: Int) -> Int? {
            var value = 0, digits = 0
            while digits < maxDigits, let c = bytes.first, c >= 0x30, c <= 0x39 {
                value = value * 10 + Int(c - 0x30)
                digits += 1
                bytes = bytes.dropFirst()
            }
            return digits > 0 ? value : nil
        }
        func expect(_ c: UInt8) -> Bool {
            guard bytes.first == c else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(6), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
              expect(0x20) || expect(0x54), let hour = number(2), expect(0x3A), let minute = number(2),
              expect(0x3A), let second = number(2) else { return nil }
        var fraction = 0.0
        if expect(0x2E) {
            var scale = 0.1
            while let c = bytes.first, c >= 0x30, c <= 0x39 {
                fraction += Double(c - 0x30) * scale
                scale /= 10
                bytes = bytes.dropFirst()
            }
        }
        var offset = 0
        if let sign = bytes.first, sign == 0x2B || sign == 0x2D {
            bytes = bytes.dropFirst()
            guard let oh = number(2) else { return nil }
            var seconds = oh * 3600
            if expect(0x3A), let om = number(2) { seconds += om * 60 }
            if expect(0x3A), let os = number(2) { seconds += os }
            offset = sign == 0x2B ? seconds : -seconds
        }
        guard bytes.isEmpty else { return nil }
        // timegm: the proleptic Gregorian calendar in UTC, no time zone file read.
        var fields = tm()
        fields.tm_year = Int32(year - 1900)
        fields.tm_mon = Int32(month - 1)
        fields.tm_mday = Int32(day)
        let seconds = Int(timegm(&fields)) + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Formats a date as `YYYY-MM-DD HH:MM:SS.ffffff+00` (microseconds, UTC).
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSince1970 * 1_000_000).rounded(.down))
        var seconds = micros >= 0 ? micros / 1_000_000 : (micros - 999_999) / 1_000_000
        let fraction = micros - seconds * 1_000_000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        seconds -= days * 86_400
        var midnight = time_t(days * 86_400), fields = tm()
        gmtime_r(&midnight, &fields)
        let (y, m, d) = (Int(fields.tm_year) + 1900, Int(fields.tm_mon) + 1, Int(fields.tm_mday))
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return "\(pad(Int64(y), 4))-\(pad(Int64(m), 2))-\(pad(Int64(d), 2)) "
            + "\(pad(seconds / 3600, 2)):\(pad(seconds % 3600 / 60, 2)):\(pad(seconds % 60, 2)).\(pad(fraction, 6))+00"
    }
}
