/// IMF-fixdate (RFC 9110 §5.6.7), the only HTTP-date form servers send today.
enum HTTPDate {
    /// `text` without leading and trailing spaces and tabs (header whitespace).
    static func trimmed(_ text: String) -> String {
        var s = Substring(text)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `"Sun, 06 Nov 1994 08:49:37 GMT"` → UNIX seconds; nil when malformed.
    static func parse(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int64(parts[1]), (1...31).contains(day),
              let monthIndex = months.firstIndex(of: String(parts[2])),
              let year = Int64(parts[3]), (1970...9999).contains(year) else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let h = Int64(clock[0]), let m = Int64(clock[1]), let s = Int64(clock[2]),
              (0...23).contains(h), (0...59).contains(m), (0...60).contains(s) else { return nil }
        return Int64(CivilCalendar.days(year: Int(year), month: monthIndex + 1, day: Int(day))) * 86_400 + h * 3600 + m * 60 + s
    }
}
